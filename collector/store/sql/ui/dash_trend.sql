-- name: dash_trend
-- description: ui_trend over the dashboard's facts (the counts of c): root-cause counts per
--   hour or day of the traces' start, with each bucket's total (the denominator of its shares).
--   c: the counts under the filters (each NULL when not given): the hourly counts of the facts
--   (_ui_cause_parts) of the hours wholly inside the time filter, and a row per trace (attribution) in
--   the hours it cuts. dash_quadrant, dash_root_causes and dash_trend share c
--   (tests/store/test_ui_statements.py holds them equal).
-- grain: one row per bucket and root_cause
-- params: $bucket VARCHAR = 'day', $run_id VARCHAR = NULL, $dataset VARCHAR = NULL, $since TIMESTAMP = NULL, $until TIMESTAMP = NULL
-- returns: bucket, root_cause, traces, bucket_traces
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
    date_trunc($bucket, hour) AS bucket,
    root_cause,
    CAST(sum(traces) AS BIGINT) AS traces,
    sum(sum(traces)) OVER (PARTITION BY date_trunc($bucket, hour)) AS bucket_traces
FROM c
WHERE hour IS NOT NULL
GROUP BY 1, 2
ORDER BY 1, 2
