-- name: dash_quadrant
-- description: queries/quadrant.sql over the dashboard's facts (the counts of cause_rows; each trace's
--   cell computed as that query does, facts_attribution): traces per run and retrieval x generation cell
--   with the run's share. tests/ui/test_facts.py checks both give the same numbers.
-- grain: one row per run_id, retrieval and generation outcome
-- params: $run_id VARCHAR = NULL, $dataset VARCHAR = NULL, $since TIMESTAMP = NULL, $until TIMESTAMP = NULL
-- returns: run_id, retrieval, generation, traces, share
WITH c AS ({rows})
SELECT run_id, retrieval, generation, CAST(sum(traces) AS BIGINT) AS traces,
       sum(traces) / sum(sum(traces)) OVER (PARTITION BY run_id) AS share
FROM c
GROUP BY run_id, retrieval, generation
ORDER BY run_id, retrieval, generation
