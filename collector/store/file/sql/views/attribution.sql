-- name: attribution
-- description: The attribution view of a file store: each gold-case trace's row of attribution_facts
--   as it is now ({body}: facts/current; what queries/attribution.sql computes from its verdicts)
--   with its gold case's category and risk and the trace's service, start, question and answer, in the
--   columns and order of queries/attribution.sql, whose rows it gives.
-- params: none
-- returns: the columns of queries/attribution.sql
SELECT
    a.trace_id,
    a.case_id,
    a.run_id,
    a.root_cause,
    a.failing_layers,
    a.evidence,
    g.category,
    g.risk,
    t.service_name,
    t.start_time,
    t.query_text,
    t.answer_text,
    a.candidate_recall,
    a.context_recall,
    a.context_retention,
    a.answer_support,
    a.fact_coverage,
    a.missing_fields
FROM ({body}) a
LEFT JOIN gold_cases g ON g.case_id = a.case_id
LEFT JOIN traces t ON t.trace_id = a.trace_id
