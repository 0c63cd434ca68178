-- name: causes
-- description: The live page's causes: live traces per hour of their start, service and the root cause
--   live_attribution proves, under the page's window and service (each NULL: not given).
-- grain: one row per hour, service_name and root_cause
-- params: $since TIMESTAMP = NULL, $until TIMESTAMP = NULL, $service VARCHAR = NULL
-- returns: hour, service_name, root_cause, traces
SELECT date_trunc('hour', start_time) AS hour, service_name, root_cause, count(*) AS traces
FROM live_attribution
WHERE ($since IS NULL OR start_time >= CAST($since AS TIMESTAMP))
  AND ($until IS NULL OR start_time < CAST($until AS TIMESTAMP))
  AND ($service IS NULL OR service_name = $service)
GROUP BY ALL
ORDER BY hour, service_name, root_cause
