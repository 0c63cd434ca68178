-- name: facts_verdicts
-- description: The current verdicts of the traces registered as _ui_ids (what the facts of those traces
--   are computed from); the caller appends the evaluated_at bound of their verdicts_since.
-- params: $since TIMESTAMP = NULL
-- returns: every column of evaluations
SELECT * FROM evaluations WHERE trace_id IN (SELECT trace_id FROM _ui_ids)
