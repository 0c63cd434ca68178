-- name: root_causes
-- description: How many evaluated traces each root cause explains, per run (the attribution breakdown).
-- grain: one row per run_id and root_cause
-- params: $run_id VARCHAR = NULL, $dataset VARCHAR = NULL, $since TIMESTAMP = NULL, $until TIMESTAMP = NULL
-- returns: run_id, root_cause, traces, share (of the run's traces with a gold case), run_traces
SELECT
    run_id,
    root_cause,
    count(*) AS traces,
    count(*) / sum(count(*)) OVER (PARTITION BY run_id) AS share,
    sum(count(*)) OVER (PARTITION BY run_id) AS run_traces
FROM attribution a
WHERE ($run_id IS NULL OR run_id = $run_id)
  AND ($since IS NULL OR start_time >= CAST($since AS TIMESTAMP))
  AND ($until IS NULL OR start_time < CAST($until AS TIMESTAMP))
  AND ($dataset IS NULL OR case_id IN (SELECT case_id FROM gold_cases WHERE dataset = $dataset))
GROUP BY run_id, root_cause
ORDER BY run_id, array_position(
    ['permission_violation', 'no_retrieval', 'evidence_not_in_kb', 'stale_context', 'candidate_miss',
     'not_opened', 'dropped_before_context', 'answered_unanswerable', 'over_refusal', 'unsupported_claims',
     'incomplete_answer', 'invalid_citation', 'insufficient_trace', 'ok'], root_cause)
