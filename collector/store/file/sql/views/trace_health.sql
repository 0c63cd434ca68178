-- name: trace_health
-- description: The trace_health view of a file store: each settled trace's row of trace_health_facts
--   as it is now ({body}: facts/current; what queries/trace_health.sql computes from its steps,
--   documents and verdicts), in the columns and order of queries/trace_health.sql, whose rows it gives.
-- params: none
-- returns: the columns of queries/trace_health.sql
SELECT
    f.trace_id,
    t.start_time,
    f.* EXCLUDE (trace_id)
FROM ({body}) f
JOIN traces t ON t.trace_id = f.trace_id
WHERE t.settled_at IS NOT NULL
