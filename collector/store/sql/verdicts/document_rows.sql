-- name: document_rows
-- description: The step documents of the traces registered as _eval_ids, in no order (the evaluators
--   sort them); the caller appends the received_at window of those traces.
-- params: $lo TIMESTAMP = NULL, $hi TIMESTAMP = NULL
-- returns: trace_id, span_id, stage, position, doc_id, chunk_id, content, score, metadata, source
SELECT trace_id, span_id, stage, position, doc_id, chunk_id, content, score,
       metadata::VARCHAR AS metadata, source
FROM step_documents
WHERE trace_id IN (SELECT trace_id FROM _eval_ids)
