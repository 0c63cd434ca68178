-- name: facts_attribution
-- description: The attribution view (queries/attribution.sql) without the columns the dashboard never
--   reads (evidence, answer_text, missing_fields: the verdicts' details are then not read at all);
--   {ids} keeps to the traces registered as _ui_ids, or is empty.
-- grain: one row per trace_id with a gold case
-- params: none
-- returns: the attribution view's columns but evidence, answer_text and missing_fields
SELECT * EXCLUDE (evidence, answer_text, missing_fields) FROM attribution e WHERE true {ids}
