-- name: new_rows
-- description: The feedback rows registered as _fb (the feedback table's columns, in order) whose
--   feedback_id is not stored yet, each id once (annotations read from a span twice add nothing). A
--   plain SELECT and INSERT (insert_new) rather than INSERT OR IGNORE, which needs a key a lake table
--   has not got.
-- params: none
-- returns: the feedback table's columns
SELECT DISTINCT ON (feedback_id) * FROM _fb WHERE feedback_id NOT IN (SELECT feedback_id FROM feedback)
