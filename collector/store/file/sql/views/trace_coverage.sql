-- name: trace_coverage
-- description: The trace_coverage view of a file store: each settled trace's row of
--   trace_coverage_facts as it is now ({body}: facts/current; what queries/trace_coverage.sql computes
--   from its own rows, its start and service included), whose rows it gives, for the traces settled now.
--   A row is what the definition gave when the trace last settled or had verdicts written, the
--   trace's own columns included: a late span changes it when the trace settles again (the settle
--   names it in facts_changed). The traces not settled are all it reads of traces, so a month's view
--   costs a scan of the facts, not a join.
-- params: none
-- returns: the columns of queries/trace_coverage.sql
SELECT f.*
FROM ({body}) f
WHERE f.trace_id NOT IN (SELECT trace_id FROM traces WHERE settled_at IS NULL)
