-- name: old_points
-- description: The metric data points delete_old_points removes (service $s, received before
--   $before), with the UTC day of their time (else when received) as their partition.
-- params: $s VARCHAR, $before TIMESTAMP
-- returns: every column of metric_points, day
SELECT p.*, strftime(coalesce(p.time, p.received_at), '%Y-%m-%d') AS day FROM metric_points p WHERE p.service_name IS NOT DISTINCT FROM $s AND p.received_at < $before
