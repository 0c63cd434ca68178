-- name: delete_old_log_records
-- description: The log records of service $s whose time (else the time they were received) is before
--   $before and that belong to no stored trace (none named, or its trace is not in traces): a record
--   of a stored trace goes with its trace.
-- params: $s VARCHAR, $before TIMESTAMP
-- returns: count deleted
DELETE FROM log_records WHERE service_name IS NOT DISTINCT FROM $s AND coalesce(time, received_at) < $before AND (trace_id IS NULL OR trace_id NOT IN (SELECT trace_id FROM traces))
