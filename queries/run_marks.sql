-- name: run_marks
-- description: The marks of each run: the group of repeats of one configuration it belongs to
--   (ragfault.run_group) and the run it is the closed-book twin of (ragfault.baseline_of). Read from
--   the runs' span attributes as sent (also under the baggage prefixes, or inside OpenInference
--   `metadata`) and from marks set through PUT /api/v1/runs/{run_id}, which win.
-- grain: one row per run_id that carries a mark
-- params: none
-- returns: run_id, run_group, baseline_of, source (api | traces)
-- view: run_marks
WITH raw AS MATERIALIZED (
    -- materialized: a filter on the view's run_id (closed_book's closed-run filter) would otherwise be pushed
    -- into this scan, where DuckDB 1.x then casts every span's attributes to text (100,000 traces:
    -- 0.4 s -> 5 s); materialized, the scan runs as unfiltered and the filter applies to its few rows
    SELECT
        run_id,
        CAST(attributes AS VARCHAR) AS a,
        CASE WHEN json_valid(attributes->>'$.metadata') THEN attributes->>'$.metadata' END AS meta
    FROM spans
    WHERE run_id IS NOT NULL
      AND (CAST(attributes AS VARCHAR) LIKE '%run\_group%' ESCAPE '\'
           OR CAST(attributes AS VARCHAR) LIKE '%baseline\_of%' ESCAPE '\')
),
attr AS (
    SELECT
        run_id,
        nullif(coalesce(a->>'$."ragfault.run_group"', a->>'$."traceloop.association.properties.ragfault.run_group"',
                 a->>'$."baggage.ragfault.run_group"', meta->>'$."ragfault.run_group"',
                 meta->>'$.ragfault.run_group'), '') AS run_group,
        nullif(coalesce(a->>'$."ragfault.baseline_of"', a->>'$."traceloop.association.properties.ragfault.baseline_of"',
                 a->>'$."baggage.ragfault.baseline_of"', meta->>'$."ragfault.baseline_of"',
                 meta->>'$.ragfault.baseline_of'), '') AS baseline_of
    FROM raw
),
traced AS (
    SELECT run_id, min(run_group) AS run_group, min(baseline_of) AS baseline_of
    FROM attr
    WHERE run_group IS NOT NULL OR baseline_of IS NOT NULL
    GROUP BY run_id
)
SELECT
    coalesce(m.run_id, t.run_id) AS run_id,
    coalesce(m.run_group, t.run_group) AS run_group,
    coalesce(m.baseline_of, t.baseline_of) AS baseline_of,
    CASE WHEN m.run_id IS NOT NULL THEN 'api' ELSE 'traces' END AS source
FROM marked_runs m FULL OUTER JOIN traced t ON m.run_id = t.run_id
ORDER BY run_id
