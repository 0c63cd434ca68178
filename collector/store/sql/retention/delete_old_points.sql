-- name: delete_old_points
-- description: The metric data points of service $s received before $before. Points have no trace:
--   retention removes them by their own age, the time ragfault received them (not the time their
--   client sent: a point dated in the future does not outlive max_age_days).
-- params: $s VARCHAR, $before TIMESTAMP
-- returns: count deleted
DELETE FROM metric_points WHERE service_name IS NOT DISTINCT FROM $s AND received_at < $before
