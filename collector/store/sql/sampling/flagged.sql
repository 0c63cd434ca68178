-- name: flagged
-- description: The metrics of $m that counted something (status ok, numerator > 0) for the traces
--   registered as _s_ids; the caller appends the evaluated_at bound of the round (verdicts_since).
-- params: $m VARCHAR[], $since TIMESTAMP = NULL
-- returns: trace_id, metric
SELECT DISTINCT trace_id, metric
FROM evaluations
WHERE trace_id IN (SELECT trace_id FROM _s_ids) AND metric IN (SELECT unnest($m)) AND status = 'ok' AND numerator > 0
