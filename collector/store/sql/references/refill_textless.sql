-- name: refill_textless
-- description: Give the textless documents of settled traces (sent as {id, score}: no text, or '') the
--   text the registry now has for them, for the documents just loaded (registered as _kb), as settling
--   does for the registry it finds (content_source = 'registry'); returns the trace of each document
--   filled. A trace not settled yet takes the text when it settles. It scans step_documents: a load of
--   documents is rare next to the spans.
--   Pair: lake/work/textless_traces (tests/store/test_statement_pairs.py holds their shared conditions equal).
-- params: none
-- returns: trace_id
UPDATE step_documents SET content = k.content, content_source = 'registry'
FROM kb_documents k
WHERE k.doc_id IN (SELECT doc_id FROM _kb)
  AND k.content <> ''
  AND k.doc_id = coalesce(step_documents.doc_id, step_documents.chunk_id)
  AND step_documents.source = 'span'
  AND (step_documents.content IS NULL OR step_documents.content = '')
  AND step_documents.trace_id IN (SELECT trace_id FROM traces WHERE settled_at IS NOT NULL)
RETURNING step_documents.trace_id
