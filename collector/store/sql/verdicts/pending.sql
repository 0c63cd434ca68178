-- name: pending
-- description: The oldest settled traces waiting for the cheap tier (their evaluated span count differs
--   from the assembled one; none while it waits to be assembled again), with that count and when their first span was received.
-- params: $n INTEGER
-- returns: trace_id, assembled_spans, first_received_at
SELECT trace_id, assembled_spans, first_received_at
FROM traces
WHERE settled_at IS NOT NULL AND assembled_spans IS NOT NULL
  AND (evaluated_spans IS NULL OR evaluated_spans <> assembled_spans)
ORDER BY settled_at
LIMIT $n
