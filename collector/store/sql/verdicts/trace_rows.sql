-- name: trace_rows
-- description: The traces rows a batch is evaluated from, for the ids registered as _eval_ids; the
--   caller appends a first_received_at range (traces_in_range) after the WHERE clause.
-- params: $lo TIMESTAMP = NULL, $hi TIMESTAMP = NULL
-- returns: trace_id, start_time, end_time, service_name, case_id, run_id, session_id, user_id, user_scope,
--   query_text, answer_text, answer_span_id, error_count, generation, first_received_at, last_received_at,
--   root_name
SELECT trace_id, start_time, end_time, service_name, case_id, run_id, session_id, user_id, user_scope,
       query_text, answer_text, answer_span_id, error_count, coalesce(eval_generation, 0) AS generation,
       first_received_at, last_received_at, root_name
FROM traces
WHERE trace_id IN (SELECT trace_id FROM _eval_ids)
