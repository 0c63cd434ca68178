-- name: mark_run
-- description: Mark a run: the group of repeats it belongs to, or the run it is the closed-book twin of
--   (a run marked again is replaced).
-- params: none (positional ?: run_id, run_group, baseline_of)
-- returns: nothing
INSERT OR REPLACE INTO marked_runs VALUES (?, ?, ?, current_timestamp::TIMESTAMP)
