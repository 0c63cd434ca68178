-- name: dash_root_causes
-- description: queries/root_causes.sql over the dashboard's facts (the counts of cause_rows): how many
--   evaluated traces each root cause explains per run, with the run's total (the share's denominator).
--   tests/ui/test_facts.py checks both give the same numbers.
-- grain: one row per run_id and root_cause
-- params: $run_id VARCHAR = NULL, $dataset VARCHAR = NULL, $since TIMESTAMP = NULL, $until TIMESTAMP = NULL
-- returns: run_id, root_cause, traces, share, run_traces
WITH c AS ({rows})
SELECT
    run_id,
    root_cause,
    CAST(sum(traces) AS BIGINT) AS traces,
    sum(traces) / sum(sum(traces)) OVER (PARTITION BY run_id) AS share,
    sum(sum(traces)) OVER (PARTITION BY run_id) AS run_traces
FROM c
GROUP BY run_id, root_cause
ORDER BY run_id, array_position(
    ['permission_violation', 'no_retrieval', 'evidence_not_in_kb', 'stale_context', 'candidate_miss',
     'not_opened', 'dropped_before_context', 'answered_unanswerable', 'over_refusal', 'unsupported_claims',
     'incomplete_answer', 'invalid_citation', 'insufficient_trace', 'ok'], root_cause)
