-- name: select_traces
-- description: Trace ids by service and start time ($until exclusive), oldest first; a NULL filter
--   does not apply.
-- params: $service VARCHAR = NULL, $since TIMESTAMP = NULL, $until TIMESTAMP = NULL, $limit BIGINT = NULL
-- returns: trace_id
SELECT trace_id FROM traces WHERE ($service IS NULL OR service_name = $service) AND ($since IS NULL OR coalesce(start_time, first_received_at) >= CAST($since AS TIMESTAMP)) AND ($until IS NULL OR coalesce(start_time, first_received_at) < CAST($until AS TIMESTAMP)) ORDER BY coalesce(start_time, first_received_at), trace_id LIMIT coalesce($limit, 9223372036854775807)
