-- name: registry_texts
-- description: Documents of the traces registered as _text_ids sent without text take the text the
--   knowledge-base registry has for them by id, as document_texts rows (content_source 'registry'):
--   step_documents shows it in place of the empty text (the file updates step_documents:
--   settle/registry_text, references/refill_textless). {docs} is empty, or loaded_docs (only the
--   documents just loaded).
-- params: $now TIMESTAMP
-- returns: nothing
INSERT INTO document_texts (trace_id, span_id, stage, position, doc_id, content, content_source, filled_at)
SELECT DISTINCT ON (d.trace_id, d.span_id, d.stage, d.position)
       d.trace_id, d.span_id, d.stage, d.position, k.doc_id, k.content, 'registry', $now
FROM span_documents d JOIN kb_documents k ON k.doc_id = coalesce(d.doc_id, d.chunk_id)
WHERE d.trace_id IN (SELECT trace_id FROM _text_ids) AND d.source = 'span'
  AND (d.content IS NULL OR d.content = '') AND k.content <> ''{docs}
