-- name: facts_refusals
-- description: The cells queries/refusal_table.sql counts (the same joins and filters): per answerability
--   verdict its cell and whether every required fact was stated, with what that query filters on (run,
--   dataset, the trace's start time) and its category. {ids}: only the traces registered as _ui_ids, or
--   empty.
-- grain: one row per answerability verdict with status ok (times its trace-level fact_coverage rows)
-- params: none
-- returns: trace_id, run_id, dataset, category, start_time, cell, all_facts
SELECT
    e.trace_id,
    e.run_id,
    g.dataset,
    coalesce(g.category, '(none)') AS category,
    t.start_time,
    e.label AS cell,
    coalesce(fc.passed, fc.status = 'not_applicable') AS all_facts
FROM evaluations e
JOIN gold_cases g ON g.case_id = e.case_id
LEFT JOIN evaluations fc
    ON fc.trace_id = e.trace_id AND fc.metric = 'fact_coverage' AND fc.span_id IS NULL
LEFT JOIN traces t ON t.trace_id = e.trace_id
WHERE e.metric = 'answerability' AND e.status = 'ok'
  {ids}
