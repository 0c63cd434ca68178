-- name: live_window_log
-- description: The evaluation log rows of the settled traces that started at or after $since, every
--   column (triage takes each trace's latest decisions from them). $received_since: the least time
--   those traces were first received (live_window_bound; NULL: unknown). A trace's log rows are written
--   after its spans were received, by the same clock, and the log is appended in the order it is
--   written, so the scan skips the row groups logged before it.
-- params: $since TIMESTAMP, $received_since TIMESTAMP = NULL
-- returns: every column of eval_log
SELECT *
FROM eval_log
WHERE ($received_since IS NULL OR logged_at >= $received_since)
  AND trace_id IN (
    SELECT trace_id FROM traces WHERE settled_at IS NOT NULL AND start_time >= CAST($since AS TIMESTAMP)
)
