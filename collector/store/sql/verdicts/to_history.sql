-- name: to_history
-- description: Copy the current verdicts of the (trace, evaluator) pairs that ran again (registered as
--   _ran) to evaluation_history;
--   $since: the evaluated_at bound (NULL: every row; rows are appended in the order they are written, so
--   the scan skips the row groups before it).
-- params: $since TIMESTAMP = NULL
-- returns: nothing
INSERT INTO evaluation_history
SELECT * FROM evaluations
WHERE (trace_id, evaluator) IN (SELECT trace_id, evaluator FROM _ran)
  AND ($since IS NULL OR evaluated_at >= $since)
