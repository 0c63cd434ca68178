-- name: live_window_log
-- description: The evaluation log rows of the settled traces that started at or after $since, every
--   column (eval_status, which triage reads, ranks them per trace).
-- params: $since TIMESTAMP
-- returns: every column of eval_log
SELECT *
FROM eval_log
WHERE trace_id IN (
    SELECT trace_id FROM traces WHERE settled_at IS NOT NULL AND start_time >= CAST($since AS TIMESTAMP)
)
