-- name: probe_foreign_services
-- description: Up to three services of the probe file's traces other than $allowed (the demo's), NULL
--   shown as '(none)': a demo database that holds them is not the demo's alone.
-- params: $allowed VARCHAR[]
-- returns: service_name
SELECT DISTINCT coalesce(service_name, '(none)') AS service_name
FROM probe.traces
WHERE service_name IS NULL OR NOT list_contains($allowed, service_name)
LIMIT 3
