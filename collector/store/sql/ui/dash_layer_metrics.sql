-- name: dash_layer_metrics
-- description: queries/layer_metrics.sql over the dashboard's facts (_ui_layers: the verdict rows that
--   query reads, with their category, run, dataset and start time): the same aggregates, each with its
--   denominator; tests/ui/test_facts.py checks both give the same numbers.
-- grain: one row per category (plus '(all)') and metric
-- params: $run_id VARCHAR = NULL, $dataset VARCHAR = NULL, $since TIMESTAMP = NULL, $until TIMESTAMP = NULL
-- returns: category, stage, metric, macro, micro, numerator, denominator, n_traces, not_applicable
WITH m AS (
    SELECT category, metric, status, value, numerator, denominator
    FROM _ui_layers
    WHERE ($run_id IS NULL OR run_id = $run_id)
      AND ($dataset IS NULL OR dataset = $dataset)
      AND ($since IS NULL OR start_time >= CAST($since AS TIMESTAMP))
      AND ($until IS NULL OR start_time < CAST($until AS TIMESTAMP))
)
SELECT
    coalesce(category, '(all)') AS category,
    CASE
        WHEN metric LIKE 'recall@%' OR metric = 'candidate_recall' THEN 'candidate'
        WHEN metric IN ('context_recall', 'context_retention') THEN 'context'
        ELSE 'generation'
    END AS stage,
    metric,
    avg(value) FILTER (WHERE status = 'ok') AS macro,
    sum(numerator) FILTER (WHERE status = 'ok') / nullif(sum(denominator) FILTER (WHERE status = 'ok'), 0) AS micro,
    sum(numerator) FILTER (WHERE status = 'ok') AS numerator,
    sum(denominator) FILTER (WHERE status = 'ok') AS denominator,
    count(*) FILTER (WHERE status = 'ok') AS n_traces,
    count(*) FILTER (WHERE status = 'not_applicable') AS not_applicable
FROM m
GROUP BY GROUPING SETS ((category, metric), (metric))
ORDER BY category IS NULL DESC, category, stage, try_cast(regexp_extract(metric, '@([0-9]+)', 1) AS INTEGER) NULLS LAST, metric
