-- name: services
-- description: The services that have settled traces, the most first (at most 50): what ragfault doctor
--   names when no trace matches its filters.
-- params: none
-- returns: service_name, traces
SELECT coalesce(service_name, 'unknown') AS service_name, count(*) AS traces
FROM traces WHERE settled_at IS NOT NULL GROUP BY ALL ORDER BY traces DESC, service_name LIMIT 50
