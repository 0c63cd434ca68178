-- name: trace_rows
-- description: The traces rows a batch is evaluated from, for the ids registered as _eval_ids;
--   $lo, $hi: the range of their first_received_at read with the ids (NULL: the whole table); $outside: the traces outside it instead (reader.traces_in_range).
-- params: $lo TIMESTAMP = NULL, $hi TIMESTAMP = NULL, $outside BOOLEAN = false
-- returns: trace_id, start_time, end_time, service_name, case_id, run_id, session_id, user_id, user_scope,
--   query_text, answer_text, answer_span_id, error_count, generation, first_received_at, last_received_at,
--   root_name
SELECT trace_id, start_time, end_time, service_name, case_id, run_id, session_id, user_id, user_scope,
       query_text, answer_text, answer_span_id, error_count, coalesce(eval_generation, 0) AS generation,
       first_received_at, last_received_at, root_name
FROM traces
WHERE trace_id IN (SELECT trace_id FROM _eval_ids)
  AND ($lo IS NULL
       OR (NOT $outside AND first_received_at BETWEEN $lo AND $hi)
       OR ($outside AND (first_received_at IS NULL OR first_received_at NOT BETWEEN $lo AND $hi)))
