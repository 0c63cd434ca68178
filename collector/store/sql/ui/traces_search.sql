-- name: traces_search
-- description: A page of the trace list under a text search, with (_total) the count of the traces that
--   match: the search reads every question and answer once for both. {where} holds the conditions of
--   the filters given (collector.store.ui.TRACE_FILTERS), {order} one of the fixed sorts of
--   collector.store.ui.TRACE_SORTS.
-- params: $service VARCHAR = NULL, $run_id VARCHAR = NULL, $since VARCHAR = NULL, $until VARCHAR = NULL,
--   $q VARCHAR, $q_re VARCHAR, $feedback BOOLEAN = NULL, $root_cause VARCHAR = NULL, $limit INTEGER, $offset INTEGER
-- returns: trace_id, start_time, service_name, run_id, case_id, span_count, error_count, latency_ms,
--   query_text, answer_text, _total
WITH t AS MATERIALIZED (
    SELECT t.trace_id, t.start_time, t.service_name, t.run_id, t.case_id, t.span_count, t.error_count,
           date_diff('microsecond', t.start_time, t.end_time) / 1000.0 AS latency_ms, t.query_text,
           t.answer_text
    FROM traces t
    WHERE true {where}
)
SELECT *, (SELECT count(*) FROM t) AS _total FROM t ORDER BY {order} LIMIT $limit OFFSET $offset
