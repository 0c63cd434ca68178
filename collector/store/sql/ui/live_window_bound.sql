-- name: live_window_bound
-- description: The least time the settled traces that started at or after $since were first received:
--   none of their spans, steps or documents was received before it (online_health's $received_since).
-- params: $since TIMESTAMP
-- returns: received
SELECT min(first_received_at)
FROM traces
WHERE settled_at IS NOT NULL AND start_time >= CAST($since AS TIMESTAMP)
