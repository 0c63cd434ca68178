-- name: insert_fills
-- description: The text the content events (or other log records) of a settle round filled into its
--   steps (registered as _fills) as step_fills rows under its $settle_id (and the step type they showed,
--   where they did), with where each field came
--   from: steps shows the last fill of each step (the file updates steps: content/write_fills).
-- params: $settle_id VARCHAR
-- returns: nothing
INSERT INTO step_fills (trace_id, span_id, query_text, input_text, output_text, settle_id, provenance, step_type)
SELECT trace_id, span_id, query_text, input_text, output_text, $settle_id, provenance, step_type FROM _fills
