-- name: live_window_verdicts
-- description: The current verdicts of the settled traces that started at or after $since, every column;
--   $bound: the evaluated_at bound of their verdicts_since (NULL: every row is looked at), so the scan
--   skips the row groups of older verdicts.
-- params: $since TIMESTAMP, $bound TIMESTAMP = NULL
-- returns: every column of evaluations
SELECT *
FROM evaluations
WHERE ($bound IS NULL OR evaluated_at >= CAST($bound AS TIMESTAMP))
  AND trace_id IN (
      SELECT trace_id FROM traces WHERE settled_at IS NOT NULL AND start_time >= CAST($since AS TIMESTAMP)
  )
