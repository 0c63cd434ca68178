-- name: of_trace
-- description: Every feedback row on one trace, oldest first.
-- params: $t VARCHAR
-- returns: the feedback table's columns
SELECT * FROM feedback WHERE trace_id = $t ORDER BY created_at
