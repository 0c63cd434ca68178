-- The former formulation of queries/follows_stale.sql, kept as the definition the bundled query must
-- equal (bench/same_results.py; tests/queries/test_same_results.py). Change both together.
-- name: follows_stale
-- description: Conflict samples per case: the latest follows_stale verdict of each case of a run, that
--   is whether a stale version of a document was retrieved, whether it reached the context or was kept
--   out of it, and whether the answer states a value only a stale version holds (evaluator
--   follows_stale). The follows-stale rate of a run is followed / stale_in_context over these rows.
-- grain: one row per run_id and gold case_id with a follows_stale verdict
-- params: $run_id VARCHAR = NULL
-- returns: run_id, case_id, category, risk, expected_behavior, answerable, stale_retrieved,
--   stale_in_context, kept_out, follows_stale, stale_values, stale_versions, trace_id
SELECT
    e.run_id,
    coalesce(e.case_id, t.case_id) AS case_id,
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
    e.trace_id
FROM evaluations e
JOIN traces t ON t.trace_id = e.trace_id
LEFT JOIN gold_cases g ON g.case_id = coalesce(e.case_id, t.case_id)
WHERE e.metric = 'follows_stale' AND e.status = 'ok' AND e.span_id IS NULL
  AND coalesce(e.case_id, t.case_id) IS NOT NULL
  AND ($run_id IS NULL OR e.run_id = $run_id)
QUALIFY row_number() OVER (
    PARTITION BY e.run_id, coalesce(e.case_id, t.case_id, e.trace_id)
    ORDER BY t.start_time DESC NULLS LAST, e.trace_id) = 1
ORDER BY e.run_id, case_id
