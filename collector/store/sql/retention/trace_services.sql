-- name: trace_services
-- description: Every service that has traces (NULL for traces without one): retention's limits are
--   per service.
-- params: none
-- returns: service_name
SELECT DISTINCT service_name FROM traces
