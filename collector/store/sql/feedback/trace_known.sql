-- name: trace_known
-- description: Whether a trace of this id is stored.
-- params: $t VARCHAR
-- returns: count
SELECT count(*) FROM traces WHERE trace_id = $t
