-- name: trace_row
-- description: One trace's row of the traces view (GET /api/v1/traces/{id}).
-- params: $t VARCHAR
-- returns: every column of traces
SELECT * FROM traces WHERE trace_id = $t
