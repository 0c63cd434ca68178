-- name: dash_quadrant
-- description: queries/quadrant.sql over the dashboard's facts (the counts of c; each trace's
--   cell computed as that query does, facts_attribution): traces per run and retrieval x generation cell
--   with the run's share. tests/ui/test_facts.py checks both give the same numbers.
--   c: the counts under the filters (each NULL when not given): the hourly counts of the facts
--   (_ui_cause_parts) of the hours wholly inside the time filter, and a row per trace (attribution) in
--   the hours it cuts. dash_quadrant, dash_root_causes and dash_trend share c
--   (tests/store/test_ui_statements.py holds them equal).
-- grain: one row per run_id, retrieval and generation outcome
-- params: $run_id VARCHAR = NULL, $dataset VARCHAR = NULL, $since TIMESTAMP = NULL, $until TIMESTAMP = NULL
-- returns: run_id, retrieval, generation, traces, share
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
SELECT run_id, retrieval, generation, CAST(sum(traces) AS BIGINT) AS traces,
       sum(traces) / sum(sum(traces)) OVER (PARTITION BY run_id) AS share
FROM c
GROUP BY run_id, retrieval, generation
ORDER BY run_id, retrieval, generation
