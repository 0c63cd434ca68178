-- The one-pass formulation of queries/case_results.sql, kept as the definition the bundled query must
-- equal (bench/same_results.py; tests/queries/test_same_results.py). Change both together. One change:
-- recall_at's keys are in the order of k (before, in whatever order the join gave the rows).
-- name: case_results
-- description: One wide row per evaluated trace with a gold case: the case's slice columns, the root cause,
--   the failing layers and the trace-level metrics release gates are written against. When a run has
--   several traces of one case, each trace is a row.
-- grain: one row per trace_id with a gold case
-- params: $run_id VARCHAR = NULL
-- returns: trace_id, case_id, run_id, category, risk, expected_behavior, answerable, root_cause, failing_layers,
--   answerability, recall_at (JSON object: the trace-level recall@k of every configured k, e.g.
--   {"recall@5": 1.0}), candidate_recall, context_recall, context_retention,
--   answer_support_num, answer_support_den, fact_coverage, citation_validity, start_time, dataset (the case's
--   gold set), promoted (the case was promoted from a live trace: gold_promotions)
SELECT
    a.trace_id,
    a.case_id,
    a.run_id,
    g.category,
    g.risk,
    g.expected_behavior,
    g.answerable,
    a.root_cause,
    a.failing_layers,
    any_value(e.label) FILTER (WHERE e.metric = 'answerability' AND e.status = 'ok') AS answerability,
    to_json(map_from_entries(list(struct_pack(k := e.metric, v := e.value) ORDER BY len(e.metric), e.metric)
        FILTER (WHERE e.metric LIKE 'recall@%' AND e.span_id IS NULL AND e.status = 'ok'))) AS recall_at,
    any_value(e.value) FILTER (WHERE e.metric = 'candidate_recall' AND e.status = 'ok') AS candidate_recall,
    any_value(e.value) FILTER (WHERE e.metric = 'context_recall' AND e.status = 'ok') AS context_recall,
    any_value(e.value) FILTER (WHERE e.metric = 'context_retention' AND e.status = 'ok') AS context_retention,
    any_value(e.numerator) FILTER (WHERE e.metric = 'answer_support' AND e.status = 'ok') AS answer_support_num,
    any_value(e.denominator) FILTER (WHERE e.metric = 'answer_support' AND e.status = 'ok') AS answer_support_den,
    any_value(e.value) FILTER (WHERE e.metric = 'fact_coverage' AND e.status = 'ok') AS fact_coverage,
    any_value(e.value) FILTER (WHERE e.metric = 'citation_validity' AND e.status = 'ok') AS citation_validity,
    a.start_time,
    g.dataset,
    p.case_id IS NOT NULL AS promoted
FROM attribution a
JOIN gold_cases g ON g.case_id = a.case_id
LEFT JOIN (SELECT DISTINCT case_id FROM gold_promotions) p ON p.case_id = a.case_id
LEFT JOIN evaluations e ON e.trace_id = a.trace_id
WHERE $run_id IS NULL OR a.run_id = $run_id
GROUP BY ALL
ORDER BY a.case_id, a.start_time
