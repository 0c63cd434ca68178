-- name: assembly_docs
-- description: The documents assembly may read for the traces in _ids, in no order: explicit context
--   documents, and the ranked stages' ($ranked, from assemble.STAGE_PRIORITY) documents with content.
--   A document sent without text takes its text from the knowledge-base registry by its id.
--   settling.load_trace_parts keeps the first row of each text (in assembly's stage order) and sorts
--   them; fetched as Arrow, the text column dictionary-encoded there. $lo, $hi as in trace_steps.
-- params: $ranked VARCHAR[], $lo TIMESTAMP = NULL, $hi TIMESTAMP = NULL
-- returns: trace_id, span_id, stage, position, doc_id, chunk_id, content, score, metadata, source
WITH d AS (SELECT d.trace_id, d.span_id, d.stage, d.position, d.doc_id, d.chunk_id, coalesce(nullif(d.content, ''), k.content) AS content, d.score, d.metadata::VARCHAR AS metadata, d.source FROM step_documents d LEFT JOIN kb_documents k ON (d.content IS NULL OR d.content = '') AND k.doc_id = coalesce(d.doc_id, d.chunk_id) WHERE d.trace_id IN (SELECT trace_id FROM _ids) AND d.source <> 'derived' AND ($lo IS NULL OR d.received_at BETWEEN $lo AND $hi)) SELECT trace_id, span_id, stage, position, doc_id, chunk_id, content, score, metadata, source FROM d WHERE (stage = 'context' AND source = 'span') OR (stage = ANY($ranked) AND content <> '')
