-- name: registry_text
-- description: Documents of the settling traces (_asm) sent without text take their text from the
--   knowledge-base registry by id (content_source = 'registry'), for the evaluators. $lo, $hi as in
--   trace_steps, on step_documents.received_at.
--   Pair: lake/work/registry_texts (tests/store/test_statement_pairs.py holds their shared conditions equal).
-- params: $lo TIMESTAMP = NULL, $hi TIMESTAMP = NULL
-- returns: nothing
UPDATE step_documents SET content = k.content, content_source = 'registry'
FROM kb_documents k
WHERE step_documents.trace_id IN (SELECT trace_id FROM _asm)
  AND ($lo IS NULL OR step_documents.received_at BETWEEN $lo AND $hi)
  AND step_documents.source = 'span'
  AND (step_documents.content IS NULL OR step_documents.content = '') AND k.content <> ''
  AND k.doc_id = coalesce(step_documents.doc_id, step_documents.chunk_id)
