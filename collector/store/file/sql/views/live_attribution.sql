-- name: live_attribution
-- description: The live_attribution view of a file store: each live trace's row of
--   live_attribution_facts as it is now ({body}: facts/current; what queries/live_attribution.sql
--   computes from its verdicts) with the trace's service, start, question and answer, for the settled
--   traces, in the columns and order of queries/live_attribution.sql, whose rows it gives.
-- params: none
-- returns: the columns of queries/live_attribution.sql
SELECT
    f.trace_id,
    t.service_name,
    t.start_time,
    f.run_id,
    f.root_cause,
    f.failing_layers,
    f.evidence,
    f.basis,
    f.missing_fields,
    t.query_text,
    t.answer_text
FROM ({body}) f
JOIN traces t ON t.trace_id = f.trace_id
WHERE t.settled_at IS NOT NULL
