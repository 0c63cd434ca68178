-- name: delete_old_log_records
-- description: The log records of service $s received before $before that belong to no stored trace
--   (none named, or its trace is not in traces): a record of a stored trace goes with its trace. By
--   the time ragfault received them, not the time their client sent: a record dated in the future
--   does not outlive max_age_days (received_at grows with the table's order, so the scan skips the
--   row groups received since).
-- params: $s VARCHAR, $before TIMESTAMP
-- returns: count deleted
DELETE FROM log_records WHERE service_name IS NOT DISTINCT FROM $s AND received_at < $before AND (trace_id IS NULL OR trace_id NOT IN (SELECT trace_id FROM traces))
