-- name: insert_new_spans
-- description: The spans of _in_spans not stored yet (a re-sent request, a span twice in the batch:
--   the first copy), when the plain append_rows failed on one. {columns} is collector.ingest.batch's
--   SPAN_COLUMNS. The keys returned are registered as _new for insert_new_steps and the others.
-- params: none
-- returns: trace_id, span_id of each span written
INSERT OR IGNORE INTO spans ({columns}) SELECT {columns} FROM _in_spans RETURNING trace_id, span_id
