-- name: facts_attribution
-- description: The attribution view (queries/attribution.sql) without the columns the dashboard never
--   reads (evidence, answer_text); {ids} keeps to the traces registered as _ui_ids, or is empty.
-- grain: one row per trace_id with a gold case
-- params: none
-- returns: the attribution view's columns but evidence and answer_text
SELECT * EXCLUDE (evidence, answer_text) FROM attribution e WHERE true {ids}
