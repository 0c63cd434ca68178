-- name: trace_row
-- description: What a promotion needs of a settled trace: its question and answer, the case it
--   carries (ragfault.case_id), the case it joins already, if any (by case id, else by normalized query),
--   and live attribution's root cause.
-- params: $t VARCHAR
-- returns: trace_id, service_name, query_text, case_id, joined_case, suggested_cause, settled
SELECT
    t.trace_id,
    t.service_name,
    t.query_text,
    t.case_id,
    coalesce(
        (SELECT g.case_id FROM gold_cases g WHERE g.case_id = t.case_id),
        (SELECT min(g.case_id) FROM gold_cases g WHERE t.case_id IS NULL AND g.query_norm = t.query_norm)
    ) AS joined_case,
    (SELECT la.root_cause FROM live_attribution la WHERE la.trace_id = t.trace_id) AS suggested_cause,
    t.settled_at IS NOT NULL AS settled
FROM traces t
WHERE t.trace_id = $t
