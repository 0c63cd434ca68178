-- name: insert
-- description: Insert the feedback rows registered as _fb (the feedback table's columns, in order); a
--   row whose feedback_id is stored already is skipped (annotations read from a span twice add nothing).
-- params: none
-- returns: trace_id, negative (of each row inserted)
INSERT OR IGNORE INTO feedback SELECT * FROM _fb RETURNING trace_id, negative
