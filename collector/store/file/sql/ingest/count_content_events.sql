-- name: count_content_events
-- description: New GenAI content events (registered as _in_events: trace_id, n, the admitted ones of
--   each trace) counted in their traces' content_events, and $now (the newest record's receipt)
--   moving last_received_at, so a trace that settled before its content arrived settles again.
-- params: $now TIMESTAMP
-- returns: nothing
UPDATE traces SET content_events = coalesce(traces.content_events, 0) + e.n,
                  last_received_at = greatest(traces.last_received_at, $now)
FROM _in_events e WHERE traces.trace_id = e.trace_id
