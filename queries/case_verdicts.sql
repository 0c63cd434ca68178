-- name: case_verdicts
-- view: case_verdicts
-- description: The verdicts the gold-set reports read (case_results, layer_metrics, refusal_table), of
--   every trace whose verdicts name a gold case: its answerability, candidate_recall, context_recall,
--   context_retention, fact_coverage, answer_support, judge_answer_support and citation_validity
--   verdicts (per trace and per step), and its per-trace recall@k of every configured k; each with the
--   columns of evaluations those reports read. A single file keeps these rows as facts, so the reports
--   read them rather than every verdict of the store.
-- grain: one row per verdict of those metrics (trace, step, metric) of a trace with a gold case
-- params: none
-- returns: trace_id, span_id, case_id, run_id, metric, status, value, numerator, denominator, passed, label
SELECT trace_id, span_id, case_id, run_id, metric, status, value, numerator, denominator, passed, label
FROM evaluations
WHERE trace_id IN (SELECT trace_id FROM evaluations WHERE case_id IS NOT NULL)
  AND (metric IN ('answerability', 'candidate_recall', 'context_recall', 'context_retention', 'fact_coverage',
                  'answer_support', 'judge_answer_support', 'citation_validity')
       OR (span_id IS NULL AND metric LIKE 'recall@%'))
