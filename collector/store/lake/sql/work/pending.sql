-- name: pending
-- description: The oldest settled traces waiting for the cheap tier that no other collector has
--   claimed (registered as _others), with the span count they were assembled with and when their first
--   span was received.
--   Pair: verdicts/pending (tests/store/test_statement_pairs.py holds their shared conditions equal).
-- params: $n INTEGER
-- returns: trace_id, assembled_spans, first_received_at
SELECT trace_id, assembled_spans, first_received_at
FROM traces
WHERE settled_at IS NOT NULL AND assembled_spans IS NOT NULL
  AND (evaluated_spans IS NULL OR evaluated_spans <> assembled_spans)
  AND trace_id NOT IN (SELECT trace_id FROM _others)
ORDER BY settled_at
LIMIT $n
