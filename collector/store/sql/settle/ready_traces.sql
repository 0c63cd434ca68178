-- name: ready_traces
-- description: Traces waiting to be assembled (never settled, or with spans or content events the
--   last assembly did not see) and complete: their root came and nothing since $settled, or their
--   last span is older than $expired. Oldest last span first. $recent is NULL for a sweep of the
--   whole table, else the round reads only traces whose last span arrived since then (it skips the
--   row groups of older traces).
-- params: $settled TIMESTAMP, $expired TIMESTAMP, $limit INTEGER, $recent TIMESTAMP = NULL
-- returns: trace_id, the count assembly will record (spans + content events), first_received_at,
--   last_received_at, whether the trace was settled before (it may have derived context rows)
SELECT trace_id, span_count + coalesce(content_events, 0), first_received_at, last_received_at, settled_at IS NOT NULL FROM traces
WHERE (settled_at IS NULL OR assembled_spans IS NULL OR assembled_spans < span_count + coalesce(content_events, 0))
  AND ((has_root AND last_received_at <= $settled) OR last_received_at <= $expired)
  AND ($recent IS NULL OR last_received_at >= $recent)
ORDER BY last_received_at
LIMIT $limit
