-- name: table_rows
-- description: The rows of the traces in _x_ids from one per-trace table ({table}), with the day of
--   their trace's start ('unknown' without a traces row).
-- params: none
-- returns: every column of the table, day
SELECT x.*, coalesce(strftime(coalesce(tr.start_time, tr.first_received_at), '%Y-%m-%d'), 'unknown') AS day FROM {table} x LEFT JOIN traces tr ON tr.trace_id = x.trace_id WHERE x.trace_id IN (SELECT trace_id FROM _x_ids)
