-- name: ready_backlog
-- description: How many recent traces are complete but not assembled yet, and when the oldest of
--   them became complete (its root's last span + $settle, or its last span + $max_wait).
-- params: $settled TIMESTAMP, $expired TIMESTAMP, $settle INTERVAL, $max_wait INTERVAL, $recent TIMESTAMP
-- returns: count, since
SELECT count(*), min(CASE WHEN has_root AND last_received_at <= $settled THEN last_received_at + $settle
                          ELSE last_received_at + $max_wait END)
FROM traces
WHERE (settled_at IS NULL OR assembled_spans IS NULL OR assembled_spans < span_count + coalesce(content_events, 0))
  AND ((has_root AND last_received_at <= $settled) OR last_received_at <= $expired)
  AND last_received_at >= $recent
