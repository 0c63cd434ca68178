-- name: write_fills
-- description: The query, input and output text the content events filled in (_fills) into their steps.
-- params: none
-- returns: nothing
UPDATE steps SET query_text = f.query_text, input_text = f.input_text, output_text = f.output_text FROM _fills f WHERE steps.trace_id = f.trace_id AND steps.span_id = f.span_id
