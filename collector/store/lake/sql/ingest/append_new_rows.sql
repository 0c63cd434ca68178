-- name: append_new_rows
-- description: append_rows when some spans of the batch are dropped (stored lately by this
--   collector, or repeated in the batch): the rows of the spans in _new, the first copy of each
--   ({key}: trace_id, span_id; for documents every column but received_at).
-- params: none
-- returns: nothing
INSERT INTO {table} ({columns}) SELECT DISTINCT ON ({key}) {columns} FROM {view}
WHERE (trace_id, span_id) IN (SELECT trace_id, span_id FROM _new)
