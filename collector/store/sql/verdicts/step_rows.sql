-- name: step_rows
-- description: The steps of the traces registered as _eval_ids;
--   $lo, $hi: the received_at range of those traces, NULL for none (every row of a trace was received in it:
--   the scan skips the rest of the table, migration 005).
-- params: $lo TIMESTAMP = NULL, $hi TIMESTAMP = NULL
-- returns: trace_id, span_id, parent_span_id, step_type, name, start_time, end_time, duration_ms,
--   status_code, model, input_tokens, output_tokens, total_tokens, query_text, input_text, output_text,
--   tool_name, tool_arguments, tool_result, top_k, citations, is_root
SELECT trace_id, span_id, parent_span_id, step_type, name, start_time, end_time, duration_ms, status_code,
       model, input_tokens, output_tokens, total_tokens, query_text, input_text, output_text, tool_name,
       tool_arguments, tool_result, top_k, citations, is_root
FROM steps
WHERE trace_id IN (SELECT trace_id FROM _eval_ids) AND ($lo IS NULL OR received_at BETWEEN $lo AND $hi)
