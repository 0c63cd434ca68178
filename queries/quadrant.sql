-- name: quadrant
-- description: Retrieval x generation quadrant per run. Retrieval is good when every evidence unit reached
--   the final context (context_recall = 1); generation is good when the answer is fully supported by the
--   context and states every required fact (or correctly refuses). Cases without evidence count as
--   retrieval 'n/a'.
-- grain: one row per run_id, retrieval and generation outcome
-- params: $run_id VARCHAR = NULL, $dataset VARCHAR = NULL, $since TIMESTAMP = NULL, $until TIMESTAMP = NULL
-- returns: run_id, retrieval, generation, traces, share
WITH t AS (
    SELECT
        a.trace_id,
        a.run_id,
        CASE WHEN a.context_recall IS NULL THEN 'n/a' WHEN a.context_recall = 1 THEN 'good' ELSE 'bad' END
            AS retrieval,
        CASE
            WHEN list_has_any(a.failing_layers,
                ['answered_unanswerable', 'over_refusal', 'unsupported_claims', 'incomplete_answer', 'invalid_citation'])
                THEN 'bad'
            ELSE 'good'
        END AS generation
    FROM attribution a
    WHERE ($run_id IS NULL OR a.run_id = $run_id)
      AND ($since IS NULL OR a.start_time >= CAST($since AS TIMESTAMP))
      AND ($until IS NULL OR a.start_time < CAST($until AS TIMESTAMP))
      AND ($dataset IS NULL OR a.case_id IN (SELECT case_id FROM gold_cases WHERE dataset = $dataset))
)
SELECT run_id, retrieval, generation, count(*) AS traces,
       count(*) / sum(count(*)) OVER (PARTITION BY run_id) AS share
FROM t
GROUP BY run_id, retrieval, generation
ORDER BY run_id, retrieval, generation
