-- name: document_rows
-- description: The step documents of the traces registered as _eval_ids, in no order (the evaluators
--   sort them); $lo, $hi: the received_at range of those traces, NULL for none (every row of a trace was received in it:
--   the scan skips the rest of the table, migration 005).
-- params: $lo TIMESTAMP = NULL, $hi TIMESTAMP = NULL
-- returns: trace_id, span_id, stage, position, doc_id, chunk_id, content, score, metadata, source
SELECT trace_id, span_id, stage, position, doc_id, chunk_id, content, score,
       metadata::VARCHAR AS metadata, source
FROM step_documents
WHERE trace_id IN (SELECT trace_id FROM _eval_ids) AND ($lo IS NULL OR received_at BETWEEN $lo AND $hi)
