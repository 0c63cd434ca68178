-- name: to_history
-- description: Copy the current verdicts of the (trace, evaluator) pairs that ran again (registered as
--   _ran) to evaluation_history; the caller appends the evaluated_at bound of verdicts_since.
-- params: $since TIMESTAMP = NULL
-- returns: nothing
INSERT INTO evaluation_history
SELECT * FROM evaluations
WHERE (trace_id, evaluator) IN (SELECT trace_id, evaluator FROM _ran)
