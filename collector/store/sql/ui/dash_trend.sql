-- name: dash_trend
-- description: ui_trend over the dashboard's facts (the counts of cause_rows): root-cause counts per
--   hour or day of the traces' start, with each bucket's total (the denominator of its shares).
-- grain: one row per bucket and root_cause
-- params: $bucket VARCHAR = 'day', $run_id VARCHAR = NULL, $dataset VARCHAR = NULL, $since TIMESTAMP = NULL, $until TIMESTAMP = NULL
-- returns: bucket, root_cause, traces, bucket_traces
WITH c AS ({rows})
SELECT
    date_trunc($bucket, hour) AS bucket,
    root_cause,
    CAST(sum(traces) AS BIGINT) AS traces,
    sum(sum(traces)) OVER (PARTITION BY date_trunc($bucket, hour)) AS bucket_traces
FROM c
WHERE hour IS NOT NULL
GROUP BY 1, 2
ORDER BY 1, 2
