-- name: run_marks
-- description: The marks of each run: the group of repeats of one configuration it belongs to
--   (ragfault.run_group) and the run it is the closed-book twin of (ragfault.baseline_of). Read from
--   the runs' span attributes as sent (also under the baggage prefixes, or inside OpenInference
--   `metadata`; the normalizer keeps them in steps.run_group and steps.baseline_of) and from marks set
--   through PUT /api/v1/runs/{run_id}, which win.
-- grain: one row per run_id that carries a mark
-- params: none
-- returns: run_id, run_group, baseline_of, source (api | traces)
-- view: run_marks
WITH traced AS (
    -- the marks as the normalizer read them from each span
    SELECT run_id, min(run_group) AS run_group, min(baseline_of) AS baseline_of
    FROM steps
    WHERE run_id IS NOT NULL AND (run_group IS NOT NULL OR baseline_of IS NOT NULL)
    GROUP BY run_id
)
SELECT
    coalesce(m.run_id, t.run_id) AS run_id,
    coalesce(m.run_group, t.run_group) AS run_group,
    coalesce(m.baseline_of, t.baseline_of) AS baseline_of,
    CASE WHEN m.run_id IS NOT NULL THEN 'api' ELSE 'traces' END AS source
FROM marked_runs m FULL OUTER JOIN traced t ON m.run_id = t.run_id
ORDER BY run_id
