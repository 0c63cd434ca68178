-- name: drop_mark
-- description: The mark of a run, dropped before it is marked again (mark_run).
-- params: none (positional ?: run_id)
-- returns: nothing
DELETE FROM marked_runs WHERE run_id = ?
