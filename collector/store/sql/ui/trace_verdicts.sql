-- name: trace_verdicts
-- description: A trace's current verdicts; the caller appends the evaluated_at bound of verdicts_since.
-- params: $t VARCHAR, $since TIMESTAMP = NULL
-- returns: span_id, evaluator, metric, value, numerator, denominator, status, passed, label, reason,
--   details, tier, generation
SELECT span_id, evaluator, metric, value, numerator, denominator, status, passed, label, reason, details,
       tier, generation
FROM evaluations
WHERE trace_id = $t
