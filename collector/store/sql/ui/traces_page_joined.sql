-- name: traces_page_joined
-- description: A page of the trace list; {order} is one of the fixed sorts of
--   collector.store.ui.TRACE_SORTS.
--   As traces_page, with the filters that join another table too: feedback given (or not), negative
--   feedback, a root cause attribution names, the traces online_health counts ($live: settled, no
--   gold case) and a cause live_attribution names (the live page's links).
-- params: $service VARCHAR = NULL, $run_id VARCHAR = NULL, $since VARCHAR = NULL, $until VARCHAR = NULL,
--   $q VARCHAR = NULL, $q_re VARCHAR = NULL, $feedback BOOLEAN = NULL, $negative_feedback BOOLEAN = NULL,
--   $root_cause VARCHAR = NULL, $live BOOLEAN = NULL, $live_cause VARCHAR = NULL,
--   $limit INTEGER, $offset INTEGER
-- returns: trace_id, start_time, service_name, run_id, case_id, span_count, error_count, latency_ms,
--   query_text, answer_text
SELECT t.trace_id, t.start_time, t.service_name, t.run_id, t.case_id, t.span_count, t.error_count,
       date_diff('microsecond', t.start_time, t.end_time) / 1000.0 AS latency_ms, t.query_text, t.answer_text
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
ORDER BY {order}
LIMIT $limit OFFSET $offset
