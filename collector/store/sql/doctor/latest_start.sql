-- name: latest_start
-- description: When the latest settled trace (of a service, or of any) started: where ragfault doctor's
--   default window ends.
-- params: $service VARCHAR
-- returns: latest
SELECT max(start_time) AS latest FROM traces
WHERE settled_at IS NOT NULL AND ($service IS NULL OR service_name = $service)
