-- name: expired_traces
-- description: The traces of service $s past its limits: started before $cutoff, or (settled ones
--   only) beyond the newest $mt traces or $ms spans. A NULL limit does not apply.
-- params: $s VARCHAR, $cutoff TIMESTAMP = NULL, $mt BIGINT = NULL, $ms BIGINT = NULL
-- returns: trace_id
SELECT trace_id FROM (SELECT trace_id, coalesce(start_time, first_received_at) AS t, row_number() OVER (ORDER BY coalesce(start_time, first_received_at) DESC, trace_id) AS rank, sum(span_count) OVER (ORDER BY coalesce(start_time, first_received_at) DESC, trace_id) AS spans, settled_at FROM traces WHERE service_name IS NOT DISTINCT FROM $s) WHERE ($cutoff IS NOT NULL AND t < $cutoff) OR (settled_at IS NOT NULL AND (($mt IS NOT NULL AND rank > $mt) OR ($ms IS NOT NULL AND spans > $ms)))
