-- name: delete_old_points
-- description: The metric data points of service $s whose time (else the time they were received)
--   is before $before. Points have no trace: retention removes them by their own age.
-- params: $s VARCHAR, $before TIMESTAMP
-- returns: count deleted
DELETE FROM metric_points WHERE service_name IS NOT DISTINCT FROM $s AND coalesce(time, received_at) < $before
