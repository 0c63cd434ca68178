-- name: drop_current
-- description: Delete the verdicts just copied to history (the pairs registered as _ran);
--   $since as in to_history.
-- params: $since TIMESTAMP = NULL
-- returns: nothing
DELETE FROM evaluations
WHERE (trace_id, evaluator) IN (SELECT trace_id, evaluator FROM _ran)
  AND ($since IS NULL OR evaluated_at >= $since)
