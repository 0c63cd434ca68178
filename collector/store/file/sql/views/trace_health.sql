-- name: trace_health
-- description: The trace_health view of a file store: each settled trace's row of trace_health_facts
--   as it is now ({body}: facts/current; what queries/trace_health.sql computes from its steps,
--   documents and verdicts, the trace's start, service, case id and error count included), whose rows
--   it gives, for the traces settled now.
--   A row is what the definition gave when the trace last settled or had verdicts written, the
--   trace's own columns included: a late span changes it when the trace settles again (the settle
--   names it in facts_changed). The traces not settled are all it reads of traces, so a month's view
--   costs a scan of the facts, not a join.
-- params: none
-- returns: the columns of queries/trace_health.sql
SELECT f.*
FROM ({body}) f
WHERE f.trace_id NOT IN (SELECT trace_id FROM traces WHERE settled_at IS NULL)
