-- name: traces_count_joined
-- description: How many traces of the trace list match the filters (exact: a count of traces).
--   As traces_count, with the filters that join another table too: feedback given (or not), negative
--   feedback, a root cause attribution names, the traces online_health counts ($live: settled, no
--   gold case) and a cause live_attribution names (the live page's links).
-- params: $service VARCHAR = NULL, $run_id VARCHAR = NULL, $since VARCHAR = NULL, $until VARCHAR = NULL,
--   $q VARCHAR = NULL, $q_re VARCHAR = NULL, $feedback BOOLEAN = NULL, $negative_feedback BOOLEAN = NULL,
--   $root_cause VARCHAR = NULL, $live BOOLEAN = NULL, $live_cause VARCHAR = NULL
-- returns: count
SELECT count(*)
FROM traces t
WHERE ($service IS NULL OR t.service_name = $service)
  AND ($run_id IS NULL OR t.run_id = $run_id)
  AND ($since IS NULL OR t.start_time >= CAST($since AS TIMESTAMP))
  AND ($until IS NULL OR t.start_time < CAST($until AS TIMESTAMP))
  AND ($q IS NULL OR regexp_matches(t.query_text, $q_re) OR regexp_matches(t.answer_text, $q_re)
       OR t.trace_id = lower($q))
  -- each subquery is planned even when its parameter is NULL: its own condition on the parameter
  -- leaves it empty then, so a filter not given reads none of its table
  AND ($feedback IS NULL
       OR $feedback = EXISTS (SELECT 1 FROM feedback f WHERE f.trace_id = t.trace_id AND $feedback IS NOT NULL))
  AND ($negative_feedback IS NULL
       OR $negative_feedback = EXISTS (
           SELECT 1 FROM feedback f
           WHERE f.trace_id = t.trace_id AND f.negative AND $negative_feedback IS NOT NULL))
  AND ($root_cause IS NULL
       OR t.trace_id IN (SELECT trace_id FROM attribution WHERE root_cause = $root_cause))
  AND ($live IS NULL
       OR $live = (t.settled_at IS NOT NULL AND t.case_id IS NULL AND NOT EXISTS (
           SELECT 1 FROM evaluations e
           WHERE e.trace_id = t.trace_id AND e.case_id IS NOT NULL AND $live IS NOT NULL)))
  AND ($live_cause IS NULL
       OR t.trace_id IN (SELECT trace_id FROM live_attribution WHERE root_cause = $live_cause))
