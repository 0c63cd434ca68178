-- name: write_fills
-- description: The query, input and output text the content events (or other log records) filled in
--   (_fills) into their steps, the step type they showed (when they did), and where each came from
--   merged into the step's provenance.
-- params: none
-- returns: nothing
UPDATE steps SET step_type = coalesce(f.step_type, steps.step_type), query_text = f.query_text, input_text = f.input_text, output_text = f.output_text, provenance = CASE WHEN f.provenance IS NULL THEN steps.provenance ELSE json_merge_patch(coalesce(steps.provenance, '{}'), f.provenance) END FROM _fills f WHERE steps.trace_id = f.trace_id AND steps.span_id = f.span_id
