-- name: requeue
-- description: Mark settled traces waiting for the cheap tier again (a trace_evals row clearing the
--   evaluated count); returns the ids marked.
--   Pair: verdicts/requeue (tests/store/test_statement_pairs.py holds their shared conditions equal).
-- params: $t VARCHAR[]
-- returns: trace_id
SELECT trace_id FROM trace_state WHERE trace_id IN (SELECT unnest($t)) AND settled_at IS NOT NULL
