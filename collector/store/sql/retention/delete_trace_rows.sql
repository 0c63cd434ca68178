-- name: delete_trace_rows
-- description: The rows of the traces in _del_ids from one per-trace table ({table}, one of
--   export/trace_tables).
-- params: none
-- returns: count deleted
DELETE FROM {table} WHERE trace_id IN (SELECT trace_id FROM _del_ids)
