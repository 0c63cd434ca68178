-- name: requeue
-- description: Mark settled traces waiting for the cheap tier again (reloaded gold cases, feedback, a
--   refilled knowledge base); returns the ids marked.
--   Pair: lake/work/requeue (tests/store/test_statement_pairs.py holds their shared conditions equal).
-- params: $t VARCHAR[]
-- returns: trace_id
UPDATE traces SET evaluated_spans = NULL
WHERE trace_id IN (SELECT unnest($t)) AND settled_at IS NOT NULL
RETURNING trace_id
