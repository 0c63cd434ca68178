-- name: triage_backlog
-- description: The triage backlog: the bundled triage query's rows ({body}, queries/triage.sql, run
--   with its own parameters) counted by service and reason (a trace counts once for each of its
--   reasons).
-- grain: one row per service_name and reason
-- params: none
-- returns: service_name, reason, traces
SELECT service_name, reason, count(*) AS traces
FROM (
{body}
) q, unnest(q.reasons) AS r(reason)
GROUP BY ALL
ORDER BY service_name, reason
