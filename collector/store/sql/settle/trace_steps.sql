-- name: trace_steps
-- description: The steps of the traces in the registered table _ids, for assembly. $lo, $hi:
--   the received_at range of those traces, NULL for none (reader.window_params).
-- params: $lo TIMESTAMP = NULL, $hi TIMESTAMP = NULL
-- returns: trace_id, span_id, parent_span_id, step_type, start_time, end_time, query_text,
--   input_text, output_text, user_scope, is_root, tool_name, tool_arguments, tool_result, status_code
SELECT trace_id, span_id, parent_span_id, step_type, start_time, end_time, query_text, input_text, output_text, user_scope, is_root, tool_name, tool_arguments, tool_result, status_code FROM steps WHERE trace_id IN (SELECT trace_id FROM _ids) AND ($lo IS NULL OR received_at BETWEEN $lo AND $hi)
