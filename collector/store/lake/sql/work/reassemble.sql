-- name: reassemble
-- description: Mark settled traces waiting to be assembled again (their documents took the text a
--   knowledge-base load gave): a trace_settles row repeating the current assembly without its count
--   (the trace stays settled, its derived context stays until it is assembled again). insert_requeued
--   then marks them waiting for the cheap tier as well.
--   Pair: references/reassemble (tests/store/test_statement_pairs.py holds their shared conditions equal).
-- params: $t VARCHAR[]
-- returns: nothing
INSERT INTO trace_settles (trace_id, settle_id, query_text, query_norm, answer_text, answer_span_id, user_scope, assembled_spans, settled_at)
SELECT trace_id, settle_id, query_text, query_norm, answer_text, answer_span_id, user_scope, NULL, settled_at
FROM trace_state WHERE trace_id IN (SELECT unnest($t)) AND settled_at IS NOT NULL
