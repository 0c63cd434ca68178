-- Migration 012: a document's position is a BIGINT.
--
-- The position is the index a span gives its document (`retrieval.documents.{i}.document.id`).
-- An index of 2^31 or more does not fit an INTEGER: it was stored as NULL, and the evaluators that
-- rank documents by position ended in `error`. Spans are kept as sent, so the index is too.
ALTER TABLE step_documents ALTER COLUMN position TYPE BIGINT;
