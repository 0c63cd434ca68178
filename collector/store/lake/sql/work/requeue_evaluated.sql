-- name: requeue_evaluated
-- description: Of these traces, the settled ones evaluated already (feedback/requeue_evaluated on a
--   lake): insert_requeued marks them waiting again.
--   Pair: feedback/requeue_evaluated (tests/store/test_statement_pairs.py holds their shared conditions equal).
-- params: $t VARCHAR[]
-- returns: trace_id
SELECT trace_id FROM trace_state
WHERE trace_id IN (SELECT unnest($t)) AND settled_at IS NOT NULL AND evaluated_spans IS NOT NULL
