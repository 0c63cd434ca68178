-- name: attribution_snapshot
-- description: The attribution view without the columns the dashboard never reads (evidence, answer_text).
-- params: none
-- returns: the attribution view's columns but evidence and answer_text
SELECT * EXCLUDE (evidence, answer_text) FROM attribution
