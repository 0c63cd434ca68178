-- name: insert_new_documents
-- description: The documents (_in_docs) of the spans insert_new_spans wrote (registered as _new). A
--   span repeated inside the batch (a request re-sent while the first was queued) lists its
--   documents twice: rows identical but for the time they were received ({key}: every column but
--   received_at) are kept once. {columns} is collector.ingest.batch's DOC_COLUMNS.
-- params: none
-- returns: nothing
INSERT INTO step_documents ({columns}) SELECT DISTINCT ON ({key}) {columns} FROM _in_docs
WHERE (trace_id, span_id) IN (SELECT trace_id, span_id FROM _new)
