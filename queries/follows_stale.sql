-- name: follows_stale
-- description: Conflict samples per case: the latest follows_stale verdict of each case of a run, that
--   is whether a stale version of a document was retrieved, whether it reached the context or was kept
--   out of it, and whether the answer states a value only a stale version holds (evaluator
--   follows_stale). The follows-stale rate of a run is followed / stale_in_context over these rows.
-- grain: one row per run_id and gold case_id with a follows_stale verdict
-- params: $run_id VARCHAR = NULL
-- returns: run_id, case_id, category, risk, expected_behavior, answerable, stale_retrieved,
--   stale_in_context, kept_out, follows_stale, stale_values, stale_versions, trace_id
WITH latest AS (
    -- each case's latest verdict chosen on the narrow columns; its details are read for those rows
    -- alone (carried through the join and the ranking, every verdict's details cost the most)
    SELECT e.run_id, coalesce(e.case_id, t.case_id) AS case_id, e.trace_id, e.evaluator
    FROM evaluations e
    JOIN traces t ON t.trace_id = e.trace_id
    WHERE e.metric = 'follows_stale' AND e.status = 'ok' AND e.span_id IS NULL
      AND coalesce(e.case_id, t.case_id) IS NOT NULL
      AND ($run_id IS NULL OR e.run_id = $run_id)
    QUALIFY row_number() OVER (
        PARTITION BY e.run_id, coalesce(e.case_id, t.case_id, e.trace_id)
        ORDER BY t.start_time DESC NULLS LAST, e.trace_id) = 1
)
SELECT
    l.run_id,
    l.case_id,
    g.category,
    g.risk,
    g.expected_behavior,
    g.answerable,
    CAST(e.details->>'stale_retrieved' AS BOOLEAN) AS stale_retrieved,
    CAST(e.details->>'stale_in_context' AS BOOLEAN) AS stale_in_context,
    CAST(e.details->>'stale_retrieved' AS BOOLEAN) AND NOT CAST(e.details->>'stale_in_context' AS BOOLEAN) AS kept_out,
    e.value = 1 AS follows_stale,
    CAST(e.details->'values' AS VARCHAR[]) AS stale_values,
    CAST(e.details->'stale_versions' AS VARCHAR[]) AS stale_versions,
    l.trace_id
FROM latest l
JOIN evaluations e
    ON e.trace_id = l.trace_id AND e.run_id = l.run_id AND e.evaluator = l.evaluator
   AND e.metric = 'follows_stale' AND e.status = 'ok' AND e.span_id IS NULL
LEFT JOIN gold_cases g ON g.case_id = l.case_id
ORDER BY l.run_id, l.case_id
