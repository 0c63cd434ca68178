-- name: reassemble
-- description: Mark settled traces waiting to be assembled again (their documents took the text a
--   knowledge-base load gave: the context derived from the prompt may now find them), and to be
--   evaluated again once assembled (the cheap tier skips a trace whose assembled count is NULL). The
--   trace stays settled meanwhile; returns the ids marked.
--   Pair: lake/work/reassemble (tests/store/test_statement_pairs.py holds their shared conditions equal).
-- params: $t VARCHAR[]
-- returns: trace_id
UPDATE traces SET assembled_spans = NULL, evaluated_spans = NULL
WHERE trace_id IN (SELECT unnest($t)) AND settled_at IS NOT NULL
RETURNING trace_id
