-- name: step_rows
-- description: The steps of the traces registered as _eval_ids; the caller appends the received_at
--   window of those traces (every step was received in it: the scan skips the rest, migration 005).
-- params: $lo TIMESTAMP = NULL, $hi TIMESTAMP = NULL
-- returns: trace_id, span_id, parent_span_id, step_type, name, start_time, end_time, duration_ms,
--   status_code, model, input_tokens, output_tokens, total_tokens, query_text, input_text, output_text,
--   tool_name, tool_arguments, tool_result, top_k, citations, is_root
SELECT trace_id, span_id, parent_span_id, step_type, name, start_time, end_time, duration_ms, status_code,
       model, input_tokens, output_tokens, total_tokens, query_text, input_text, output_text, tool_name,
       tool_arguments, tool_result, top_k, citations, is_root
FROM steps
WHERE trace_id IN (SELECT trace_id FROM _eval_ids)
