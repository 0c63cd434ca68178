-- name: old_log_records
-- description: The log records delete_old_log_records removes (service $s, received before $before,
--   of no stored trace), with the UTC day of their time (else when received) as their partition.
-- params: $s VARCHAR, $before TIMESTAMP
-- returns: every column of log_records, day
SELECT l.*, strftime(coalesce(l.time, l.received_at), '%Y-%m-%d') AS day FROM log_records l WHERE l.service_name IS NOT DISTINCT FROM $s AND l.received_at < $before AND (l.trace_id IS NULL OR l.trace_id NOT IN (SELECT trace_id FROM traces))
