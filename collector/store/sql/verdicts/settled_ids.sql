-- name: settled_ids
-- description: The settled traces to evaluate again (of a run, in a time range; any filter may be NULL),
--   oldest received first. Run through the query interface, so the bounds come as ISO text and are cast
--   here (settled_received is the cursor's form, with typed bounds and a limit).
-- params: $run_id VARCHAR = NULL, $since VARCHAR = NULL, $until VARCHAR = NULL
-- returns: trace_id
SELECT trace_id
FROM traces
WHERE settled_at IS NOT NULL
  AND ($run_id IS NULL OR run_id = $run_id)
  AND ($since IS NULL OR start_time >= CAST($since AS TIMESTAMP))
  AND ($until IS NULL OR start_time < CAST($until AS TIMESTAMP))
ORDER BY first_received_at, trace_id
