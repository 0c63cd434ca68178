-- name: facts_layers
-- description: The verdict rows queries/layer_metrics.sql aggregates (the same joins and filters), each
--   with what that query filters on (run, dataset, the trace's start time) and its category, so the
--   dashboard aggregates them without reading evaluations again. {ids}: only the traces registered as
--   _ui_ids, or empty. hour: the start time's hour, the bucket of facts_layer_parts.
-- grain: one row per verdict row layer_metrics reads
-- params: none
-- returns: trace_id, run_id, dataset, category, start_time, hour, metric, status, value, numerator,
--   denominator
SELECT
    e.trace_id,
    e.run_id,
    g.dataset,
    coalesce(g.category, '(none)') AS category,
    t.start_time,
    date_trunc('hour', t.start_time) AS hour,
    e.metric,
    e.status,
    e.value,
    e.numerator,
    e.denominator
FROM case_verdicts e
JOIN gold_cases g ON g.case_id = e.case_id
LEFT JOIN traces t ON t.trace_id = e.trace_id
WHERE (e.span_id IS NULL OR e.metric IN ('answer_support', 'judge_answer_support'))
  AND (e.metric LIKE 'recall@%'
       OR e.metric IN ('candidate_recall', 'context_recall', 'context_retention', 'answer_support',
                       'judge_answer_support', 'fact_coverage'))
  {ids}
