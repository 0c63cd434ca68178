-- name: delete_copies
-- description: The second and later copies of each row of {table} (span_rows, step_rows,
--   step_document_rows, log_records, metric_points) deleted: rows with the same {key} (a span's
--   trace_id, span_id, a document's columns but received_at, a record's or a point's id), the first
--   by {order} (received_at, then rowid) kept. Maintenance, one process at a time.
-- params: none
-- returns: the rows deleted
DELETE FROM {table} WHERE rowid IN (
    SELECT rowid FROM (
        SELECT rowid, row_number() OVER (PARTITION BY {key} ORDER BY {order}) AS n FROM {table}
    ) WHERE n > 1
)
