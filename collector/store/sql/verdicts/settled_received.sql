-- name: settled_received
-- description: Settled traces matching the filters (any may be NULL), oldest first, each with the time
--   its first span was received.
-- params: $run_id VARCHAR = NULL, $since TIMESTAMP = NULL, $until TIMESTAMP = NULL, $limit INTEGER
-- returns: trace_id, first_received_at
SELECT trace_id, first_received_at
FROM traces
WHERE settled_at IS NOT NULL
  AND ($run_id IS NULL OR run_id = $run_id)
  AND ($since IS NULL OR start_time >= $since)
  AND ($until IS NULL OR start_time < $until)
ORDER BY first_received_at, trace_id
LIMIT $limit
