-- name: textless_traces
-- description: The settled traces with a document sent without text that the documents just loaded
--   (registered as _kb) have text for: a knowledge-base load refills them (refill_textless on the
--   file). A trace not settled yet takes the text when it settles.
--   Pair: references/refill_textless (tests/store/test_statement_pairs.py holds their shared conditions equal).
-- params: none
-- returns: trace_id
SELECT DISTINCT d.trace_id
FROM span_documents d JOIN kb_documents k ON k.doc_id = coalesce(d.doc_id, d.chunk_id)
WHERE d.source = 'span' AND (d.content IS NULL OR d.content = '') AND k.content <> ''
  AND k.doc_id IN (SELECT doc_id FROM _kb)
  AND d.trace_id IN (SELECT trace_id FROM trace_state WHERE settled_at IS NOT NULL)
ORDER BY d.trace_id
