-- name: flagged
-- description: The metrics of $m that counted something (status ok, numerator > 0) for the traces
--   registered as _s_ids;
--   $since: the evaluated_at bound (NULL: every row; rows are appended in the order they are written, so
--   the scan skips the row groups before it).
-- params: $m VARCHAR[], $since TIMESTAMP = NULL
-- returns: trace_id, metric
SELECT DISTINCT trace_id, metric
FROM evaluations
WHERE trace_id IN (SELECT trace_id FROM _s_ids) AND metric IN (SELECT unnest($m)) AND status = 'ok' AND numerator > 0
  AND ($since IS NULL OR evaluated_at >= $since)
