-- name: registry_texts
-- description: Documents of the traces registered as _text_ids sent without text take the text the
--   knowledge-base registry has for them by id, as document_texts rows (content_source 'registry'):
--   step_documents shows it in place of the empty text (the file updates step_documents:
--   settle/registry_text, references/refill_textless). $loaded: only the documents just loaded
--   (a knowledge-base load: registered as _kb, which a settle round registers empty).
--   Pair: settle/registry_text (tests/store/test_statement_pairs.py holds their shared conditions equal).
-- params: $now TIMESTAMP, $loaded BOOLEAN
-- returns: nothing
INSERT INTO document_texts (trace_id, span_id, stage, position, doc_id, content, content_source, filled_at)
SELECT DISTINCT ON (d.trace_id, d.span_id, d.stage, d.position)
       d.trace_id, d.span_id, d.stage, d.position, k.doc_id, k.content, 'registry', $now
FROM span_documents d JOIN kb_documents k ON k.doc_id = coalesce(d.doc_id, d.chunk_id)
WHERE d.trace_id IN (SELECT trace_id FROM _text_ids) AND d.source = 'span'
  AND (d.content IS NULL OR d.content = '') AND k.content <> ''
  AND (NOT $loaded OR k.doc_id IN (SELECT doc_id FROM _kb))
