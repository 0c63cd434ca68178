-- name: traces_page
-- description: A page of the trace list; {where} holds the conditions of the filters given
--   (collector.store.ui.TRACE_FILTERS), {order} one of the fixed sorts of collector.store.ui.TRACE_SORTS.
-- params: $service VARCHAR = NULL, $run_id VARCHAR = NULL, $since VARCHAR = NULL, $until VARCHAR = NULL,
--   $q VARCHAR = NULL, $q_re VARCHAR = NULL, $feedback BOOLEAN = NULL, $root_cause VARCHAR = NULL,
--   $limit INTEGER, $offset INTEGER
-- returns: trace_id, start_time, service_name, run_id, case_id, span_count, error_count, latency_ms,
--   query_text, answer_text
SELECT t.trace_id, t.start_time, t.service_name, t.run_id, t.case_id, t.span_count, t.error_count,
       date_diff('microsecond', t.start_time, t.end_time) / 1000.0 AS latency_ms, t.query_text, t.answer_text
FROM traces t
WHERE true {where}
ORDER BY {order}
LIMIT $limit OFFSET $offset
