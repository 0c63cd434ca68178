-- name: trace_steps
-- description: One trace's steps in start order (GET /api/v1/traces/{id}).
-- params: $t VARCHAR
-- returns: every column of steps
SELECT * FROM steps WHERE trace_id = $t ORDER BY start_time
