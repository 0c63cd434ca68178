-- name: traces_search
-- description: A page of the trace list under a text search, with (_total) the count of the traces that
--   match: the search reads every question and answer once for both. {order} is one of the fixed
--   sorts of collector.store.ui.TRACE_SORTS.
--   The filters of the trace's own row, each a parameter (NULL: not given); $q is matched as $q_re, a
--   literal regular expression (collector.store.ui.search_pattern: RE2 ignores case without a
--   lower-cased copy of every text). With a filter that joins another table, traces_search_joined is run
--   instead: naming those tables, even for filters not given, costs a plan of their views and a
--   pass over every trace's id (at 1,000,000 traces, an unfiltered page 5 -> 70 ms).
-- params: $service VARCHAR = NULL, $run_id VARCHAR = NULL, $since VARCHAR = NULL, $until VARCHAR = NULL,
--   $q VARCHAR = NULL, $q_re VARCHAR = NULL,
--   $limit INTEGER, $offset INTEGER
-- returns: trace_id, start_time, service_name, run_id, case_id, span_count, error_count, latency_ms,
--   query_text, answer_text, _total
WITH t AS MATERIALIZED (
    SELECT t.trace_id, t.start_time, t.service_name, t.run_id, t.case_id, t.span_count, t.error_count,
           date_diff('microsecond', t.start_time, t.end_time) / 1000.0 AS latency_ms, t.query_text, t.answer_text
    FROM traces t
    WHERE ($service IS NULL OR t.service_name = $service)
      AND ($run_id IS NULL OR t.run_id = $run_id)
      AND ($since IS NULL OR t.start_time >= CAST($since AS TIMESTAMP))
      AND ($until IS NULL OR t.start_time < CAST($until AS TIMESTAMP))
      AND ($q IS NULL OR regexp_matches(t.query_text, $q_re) OR regexp_matches(t.answer_text, $q_re)
           OR t.trace_id = lower($q))
)
SELECT *, (SELECT count(*) FROM t) AS _total FROM t ORDER BY {order} LIMIT $limit OFFSET $offset
