-- name: new_span_summaries
-- description: The columns a traces summary is made of ({columns}: schema.SUMMARY_COLUMNS) of the
--   spans insert_new_spans wrote (registered as _new), a span repeated inside the batch counted once.
-- params: none
-- returns: {columns}
SELECT DISTINCT ON (trace_id, span_id) {columns} FROM _in_spans
WHERE (trace_id, span_id) IN (SELECT trace_id, span_id FROM _new)
