-- name: over_budget_log
-- description: An eval_log row for a trace the judge tier skipped on budget.
-- params: none (positional ?: trace_id, logged_at)
-- returns: nothing
INSERT INTO eval_log VALUES (?, 'judge', NULL, 'over_budget', 'budget', NULL, ?)
