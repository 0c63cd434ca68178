-- name: dash_root_causes
-- description: queries/root_causes.sql over the dashboard's facts (the counts of c): how many
--   evaluated traces each root cause explains per run, with the run's total (the share's denominator).
--   tests/ui/test_facts.py checks both give the same numbers.
--   c: the counts under the filters (each NULL when not given): the hourly counts of the facts
--   (_ui_cause_parts) of the hours wholly inside the time filter, and a row per trace (attribution) in
--   the hours it cuts. dash_quadrant, dash_root_causes and dash_trend share c
--   (tests/store/test_ui_statements.py holds them equal).
-- grain: one row per run_id and root_cause
-- params: $run_id VARCHAR = NULL, $dataset VARCHAR = NULL, $since TIMESTAMP = NULL, $until TIMESTAMP = NULL
-- returns: run_id, root_cause, traces, share, run_traces
WITH c AS (
    -- the hourly counts of the hours wholly inside the time filter (all hours without one) ...
    SELECT run_id, hour, root_cause, retrieval, generation, traces
    FROM _ui_cause_parts
    WHERE ($run_id IS NULL OR run_id = $run_id)
      AND ($dataset IS NULL OR dataset = $dataset)
      AND ($since IS NULL OR hour >= CAST($since AS TIMESTAMP))
      AND ($until IS NULL OR hour + INTERVAL 1 HOUR <= CAST($until AS TIMESTAMP))
    UNION ALL
    -- ... and one row per trace in the hours the filter cuts
    SELECT run_id, hour, root_cause, retrieval, generation, 1
    FROM attribution
    WHERE ($since IS NOT NULL OR $until IS NOT NULL)
      AND ($run_id IS NULL OR run_id = $run_id)
      AND ($dataset IS NULL OR case_id IN (SELECT case_id FROM gold_cases WHERE dataset = $dataset))
      AND ($since IS NULL OR start_time >= CAST($since AS TIMESTAMP))
      AND ($until IS NULL OR start_time < CAST($until AS TIMESTAMP))
      AND NOT (($since IS NULL OR hour >= CAST($since AS TIMESTAMP))
               AND ($until IS NULL OR hour + INTERVAL 1 HOUR <= CAST($until AS TIMESTAMP)))
)
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
