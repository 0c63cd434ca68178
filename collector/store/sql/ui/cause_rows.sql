-- name: cause_rows
-- description: A fragment: the counts the dashboard's root causes, quadrant and trend add up under the
--   filters: the hourly counts (_ui_cause_parts) of the hours wholly inside the time filter, and one
--   row per trace (attribution) in the hours the filter cuts. Put in the {rows} of dash_root_causes,
--   dash_quadrant and dash_trend.
-- params: $run_id VARCHAR = NULL, $dataset VARCHAR = NULL, $since TIMESTAMP = NULL, $until TIMESTAMP = NULL
-- returns: run_id, hour, root_cause, retrieval, generation, traces
SELECT run_id, hour, root_cause, retrieval, generation, traces
FROM _ui_cause_parts
WHERE ($run_id IS NULL OR run_id = $run_id)
  AND ($dataset IS NULL OR dataset = $dataset)
  AND ($since IS NULL OR hour >= CAST($since AS TIMESTAMP))
  AND ($until IS NULL OR hour + INTERVAL 1 HOUR <= CAST($until AS TIMESTAMP))
UNION ALL
SELECT run_id, hour, root_cause, retrieval, generation, 1
FROM attribution
WHERE ($since IS NOT NULL OR $until IS NOT NULL)
  AND ($run_id IS NULL OR run_id = $run_id)
  AND ($dataset IS NULL OR case_id IN (SELECT case_id FROM gold_cases WHERE dataset = $dataset))
  AND ($since IS NULL OR start_time >= CAST($since AS TIMESTAMP))
  AND ($until IS NULL OR start_time < CAST($until AS TIMESTAMP))
  AND NOT (($since IS NULL OR hour >= CAST($since AS TIMESTAMP))
           AND ($until IS NULL OR hour + INTERVAL 1 HOUR <= CAST($until AS TIMESTAMP)))
