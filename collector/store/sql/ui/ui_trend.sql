-- name: ui_trend
-- description: Root-cause counts per time bucket (hour or day) of the traces' start time, with each
--   bucket's total (the denominator of its shares).
-- grain: one row per bucket and root_cause
-- params: $bucket VARCHAR = 'day', $run_id VARCHAR = NULL, $dataset VARCHAR = NULL, $since TIMESTAMP = NULL, $until TIMESTAMP = NULL
-- returns: bucket, root_cause, traces, bucket_traces
SELECT
    date_trunc($bucket, start_time) AS bucket,
    root_cause,
    count(*) AS traces,
    sum(count(*)) OVER (PARTITION BY date_trunc($bucket, start_time)) AS bucket_traces
FROM attribution
WHERE start_time IS NOT NULL
  AND ($run_id IS NULL OR run_id = $run_id)
  AND ($since IS NULL OR start_time >= CAST($since AS TIMESTAMP))
  AND ($until IS NULL OR start_time < CAST($until AS TIMESTAMP))
  AND ($dataset IS NULL OR case_id IN (SELECT case_id FROM gold_cases WHERE dataset = $dataset))
GROUP BY 1, 2
ORDER BY 1, 2
