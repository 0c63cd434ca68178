-- name: any_waiting
-- description: How many traces whose last span arrived since $recent wait to be assembled, ready or
--   not yet (zero lets an idle settle loop wait for spans instead of polling).
-- params: $recent TIMESTAMP
-- returns: count
SELECT count(*) FROM traces
WHERE (settled_at IS NULL OR assembled_spans IS NULL OR assembled_spans < span_count + coalesce(content_events, 0))
  AND last_received_at >= $recent
