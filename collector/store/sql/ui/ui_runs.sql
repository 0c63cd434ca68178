-- name: ui_runs
-- description: Every run with its trace count and time span, newest first (the UI's run pickers).
-- grain: one row per run_id
-- params: none
-- returns: run_id, traces, first_start, last_start
SELECT run_id, count(*) AS traces, min(start_time) AS first_start, max(start_time) AS last_start
FROM traces
WHERE run_id IS NOT NULL
GROUP BY run_id
ORDER BY last_start DESC NULLS LAST, run_id
