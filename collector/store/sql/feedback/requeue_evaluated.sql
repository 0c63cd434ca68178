-- name: requeue_evaluated
-- description: Mark settled traces that were evaluated already waiting for evaluation again (new
--   negative feedback); returns the ids marked.
--   Pair: lake/work/requeue_evaluated (tests/store/test_statement_pairs.py holds their shared conditions equal).
-- params: $t VARCHAR[]
-- returns: trace_id
UPDATE traces SET evaluated_spans = NULL
WHERE trace_id IN (SELECT unnest($t)) AND settled_at IS NOT NULL AND evaluated_spans IS NOT NULL
RETURNING trace_id
