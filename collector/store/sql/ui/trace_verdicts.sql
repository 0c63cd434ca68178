-- name: trace_verdicts
-- description: A trace's current verdicts, by evaluator, metric and span; $since: the evaluated_at bound
--   of its verdicts_since (NULL: every row is read).
-- params: $t VARCHAR, $since TIMESTAMP = NULL
-- returns: span_id, evaluator, metric, value, numerator, denominator, status, passed, label, reason,
--   details, tier, generation
SELECT span_id, evaluator, metric, value, numerator, denominator, status, passed, label, reason, details,
       tier, generation
FROM evaluations
WHERE trace_id = $t AND ($since IS NULL OR evaluated_at >= $since)
ORDER BY evaluator, metric, span_id
