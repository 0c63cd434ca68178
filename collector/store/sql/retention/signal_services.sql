-- name: signal_services
-- description: Every service that has log records or metric data points (NULL for those without
--   one): they are kept by their service's max_age_days.
-- params: none
-- returns: service_name
SELECT service_name FROM log_records UNION SELECT service_name FROM metric_points
