-- name: expired_traces
-- description: The traces of service $s past its limits: first received before $cutoff, or (settled
--   ones only) beyond the $mt most recently received traces or $ms spans. Age and order are the time
--   ragfault received a trace, never the start time its client sent: a trace dated in the future
--   neither outlives max_age_days nor pushes out traces received after it. (first_received_at alone,
--   not coalesced with another column: 46 ms on 50,000 traces, where ordering by
--   coalesce(start_time, first_received_at) took 71.) A NULL limit does not apply.
-- params: $s VARCHAR, $cutoff TIMESTAMP = NULL, $mt BIGINT = NULL, $ms BIGINT = NULL
-- returns: trace_id
SELECT trace_id FROM (SELECT trace_id, first_received_at AS t, row_number() OVER (ORDER BY first_received_at DESC, trace_id) AS rank, sum(span_count) OVER (ORDER BY first_received_at DESC, trace_id) AS spans, settled_at FROM traces WHERE service_name IS NOT DISTINCT FROM $s) WHERE ($cutoff IS NOT NULL AND t < $cutoff) OR (settled_at IS NOT NULL AND (($mt IS NOT NULL AND rank > $mt) OR ($ms IS NOT NULL AND spans > $ms)))
