-- name: traces_page
-- description: A page of the trace list; {order} is one of the fixed sorts of collector.store.ui.TRACE_SORTS.
-- params: $service VARCHAR = NULL, $run_id VARCHAR = NULL, $since VARCHAR = NULL, $until VARCHAR = NULL,
--   $q VARCHAR = NULL, $feedback BOOLEAN = NULL, $root_cause VARCHAR = NULL,
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
  AND ($q IS NULL OR contains(lower(coalesce(t.query_text, '')), lower($q))
       OR contains(lower(coalesce(t.answer_text, '')), lower($q)) OR t.trace_id = lower($q))
  AND ($feedback IS NULL OR $feedback = EXISTS (SELECT 1 FROM feedback f WHERE f.trace_id = t.trace_id))
  AND ($root_cause IS NULL OR t.trace_id IN (SELECT trace_id FROM attribution WHERE root_cause = $root_cause))
ORDER BY {order}
LIMIT $limit OFFSET $offset
