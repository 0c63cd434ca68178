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
WITH a AS (
    SELECT trace_id, case_id, run_id, root_cause, failing_layers, start_time
    FROM attribution
    WHERE $run_id IS NULL OR run_id = $run_id
),
-- each trace's verdict values, from the small columns of its verdicts, aggregated before the join, in
-- one pass: the scalar metrics and the trace-level recall@k of every configured k (keys in the order
-- of k: recall@1, recall@3, ..., recall@10); every gold-case trace's (case_verdicts holds only those),
-- the join below keeps those of `a` (a semi-join to `a` here cost more than it saved)
v AS (
    SELECT
        e.trace_id,
        any_value(e.label) FILTER (WHERE e.metric = 'answerability') AS answerability,
        any_value(e.value) FILTER (WHERE e.metric = 'candidate_recall') AS candidate_recall,
        any_value(e.value) FILTER (WHERE e.metric = 'context_recall') AS context_recall,
        any_value(e.value) FILTER (WHERE e.metric = 'context_retention') AS context_retention,
        any_value(e.numerator) FILTER (WHERE e.metric = 'answer_support') AS answer_support_num,
        any_value(e.denominator) FILTER (WHERE e.metric = 'answer_support') AS answer_support_den,
        any_value(e.value) FILTER (WHERE e.metric = 'fact_coverage') AS fact_coverage,
        any_value(e.value) FILTER (WHERE e.metric = 'citation_validity') AS citation_validity,
        to_json(map_from_entries(list_transform(
            list_sort(list(struct_pack(n := len(e.metric), k := e.metric, v := e.value))  -- by n, then name
                FILTER (WHERE e.span_id IS NULL AND e.metric LIKE 'recall@%')),
            lambda x: struct_pack(k := x.k, v := x.v)))) AS recall_at
    FROM case_verdicts e
    WHERE e.status = 'ok'
      AND (e.metric IN ('answerability', 'candidate_recall', 'context_recall', 'context_retention', 'answer_support',
                        'fact_coverage', 'citation_validity')
           OR (e.span_id IS NULL AND e.metric LIKE 'recall@%'))
    GROUP BY e.trace_id
)
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
    v.answerability,
    v.recall_at,
    v.candidate_recall,
    v.context_recall,
    v.context_retention,
    v.answer_support_num,
    v.answer_support_den,
    v.fact_coverage,
    v.citation_validity,
    a.start_time,
    g.dataset,
    p.case_id IS NOT NULL AS promoted
FROM a
JOIN gold_cases g ON g.case_id = a.case_id
LEFT JOIN (SELECT DISTINCT case_id FROM gold_promotions) p ON p.case_id = a.case_id
LEFT JOIN v ON v.trace_id = a.trace_id
ORDER BY a.case_id, a.start_time
