-- name: span_services
-- description: The service of the stored spans of traces $t with span ids among $s (the caller keeps
--   the pairs it asked for), among the spans received between $lo and $hi (the received range of
--   those traces: the scan skips the row groups outside it).
-- params: $lo TIMESTAMP, $hi TIMESTAMP, $t VARCHAR[], $s VARCHAR[]
-- returns: trace_id, span_id, service_name
SELECT trace_id, span_id, service_name FROM spans WHERE received_at BETWEEN $lo AND $hi AND trace_id = ANY($t) AND span_id = ANY($s)
