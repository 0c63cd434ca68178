-- name: trace_facts
-- description: What sampling reads of the traces registered as _s_ids; the caller appends a
--   first_received_at range (traces_in_range).
-- params: $lo TIMESTAMP = NULL, $hi TIMESTAMP = NULL
-- returns: trace_id, service_name, run_id, root_name, error_count, root_span_id, generation,
--   first_received_at, last_received_at
SELECT trace_id, service_name, run_id, root_name, coalesce(error_count, 0), root_span_id,
       coalesce(eval_generation, 0), first_received_at, last_received_at
FROM traces
WHERE trace_id IN (SELECT trace_id FROM _s_ids)
