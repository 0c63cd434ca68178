-- name: mark_run
-- description: Mark a run: the group of repeats it belongs to, or the run it is the closed-book twin of
--   (after drop_mark: a run marked again is replaced; a plain INSERT, so the lake takes it too).
-- params: none (positional ?: run_id, run_group, baseline_of)
-- returns: nothing
INSERT INTO marked_runs VALUES (?, ?, ?, current_timestamp::TIMESTAMP)
