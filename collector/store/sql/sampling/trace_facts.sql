-- name: trace_facts
-- description: What sampling reads of the traces registered as _s_ids;
--   $lo, $hi: the range of their first_received_at read with the ids (NULL: the whole table); $outside: the traces outside it instead (reader.traces_in_range).
-- params: $lo TIMESTAMP = NULL, $hi TIMESTAMP = NULL, $outside BOOLEAN = false
-- returns: trace_id, service_name, run_id, root_name, error_count, root_span_id, generation,
--   first_received_at, last_received_at
SELECT trace_id, service_name, run_id, root_name, coalesce(error_count, 0), root_span_id,
       coalesce(eval_generation, 0), first_received_at, last_received_at
FROM traces
WHERE trace_id IN (SELECT trace_id FROM _s_ids)
  AND ($lo IS NULL
       OR (NOT $outside AND first_received_at BETWEEN $lo AND $hi)
       OR ($outside AND (first_received_at IS NULL OR first_received_at NOT BETWEEN $lo AND $hi)))
