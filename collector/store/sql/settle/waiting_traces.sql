-- name: waiting_traces
-- description: Every trace with spans not assembled yet, whether complete or not, and every trace
--   marked to be assembled again (a knowledge-base load gave its documents text): a forced round,
--   the CLI settling a file whose server stopped before it settled.
-- params: $limit INTEGER
-- returns: trace_id, the count assembly will record, first_received_at, last_received_at,
--   whether the trace was settled before (it may have derived context rows)
SELECT trace_id, span_count + coalesce(content_events, 0), first_received_at, last_received_at, settled_at IS NOT NULL
FROM traces WHERE settled_at IS NULL OR assembled_spans IS NULL OR assembled_spans < span_count + coalesce(content_events, 0)
LIMIT $limit
