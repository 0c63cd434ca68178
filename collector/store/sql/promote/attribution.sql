-- name: attribution
-- description: What attribution finds for a promoted trace once it was evaluated again with its new
--   gold case (no row: the trace was not evaluated).
-- params: $t VARCHAR
-- returns: root_cause, failing_layers
SELECT root_cause, failing_layers FROM attribution WHERE trace_id = $t
