-- name: dash_layer_metrics
-- description: queries/layer_metrics.sql over the dashboard's facts: the same aggregates, each with its
--   denominator, added up from the hourly sums of the verdict rows (_ui_layer_parts: facts_layer_parts)
--   whose hour lies wholly inside the time filter, and from the rows themselves (_ui_layers) in the
--   hours the filter cuts. tests/ui/test_facts.py checks both give the same numbers.
-- grain: one row per category (plus '(all)') and metric
-- params: $run_id VARCHAR = NULL, $dataset VARCHAR = NULL, $since TIMESTAMP = NULL, $until TIMESTAMP = NULL
-- returns: category, stage, metric, macro, micro, numerator, denominator, n_traces, not_applicable
WITH parts AS (
    SELECT category, metric, n_ok, value_n, value_sum, numerator, denominator, n_na
    FROM _ui_layer_parts
    WHERE ($run_id IS NULL OR run_id = $run_id)
      AND ($dataset IS NULL OR dataset = $dataset)
      AND ($since IS NULL OR hour >= CAST($since AS TIMESTAMP))
      AND ($until IS NULL OR hour + INTERVAL 1 HOUR <= CAST($until AS TIMESTAMP))
    UNION ALL
    SELECT category, metric,
        CAST(status = 'ok' AS BIGINT), CAST(status = 'ok' AND value IS NOT NULL AS BIGINT),
        CASE WHEN status = 'ok' THEN value END, CASE WHEN status = 'ok' THEN numerator END,
        CASE WHEN status = 'ok' THEN denominator END, CAST(status = 'not_applicable' AS BIGINT)
    FROM _ui_layers
    WHERE ($since IS NOT NULL OR $until IS NOT NULL)
      AND ($run_id IS NULL OR run_id = $run_id)
      AND ($dataset IS NULL OR dataset = $dataset)
      AND ($since IS NULL OR start_time >= CAST($since AS TIMESTAMP))
      AND ($until IS NULL OR start_time < CAST($until AS TIMESTAMP))
      AND NOT (($since IS NULL OR hour >= CAST($since AS TIMESTAMP))
               AND ($until IS NULL OR hour + INTERVAL 1 HOUR <= CAST($until AS TIMESTAMP)))
)
SELECT
    coalesce(category, '(all)') AS category,
    CASE
        WHEN metric LIKE 'recall@%' OR metric = 'candidate_recall' THEN 'candidate'
        WHEN metric IN ('context_recall', 'context_retention') THEN 'context'
        ELSE 'generation'
    END AS stage,
    metric,
    sum(value_sum) / nullif(sum(value_n), 0) AS macro,
    sum(numerator) / nullif(sum(denominator), 0) AS micro,
    sum(numerator) AS numerator,
    sum(denominator) AS denominator,
    CAST(sum(n_ok) AS BIGINT) AS n_traces,
    CAST(sum(n_na) AS BIGINT) AS not_applicable
FROM parts
GROUP BY GROUPING SETS ((category, metric), (metric))
ORDER BY category IS NULL DESC, category, stage, try_cast(regexp_extract(metric, '@([0-9]+)', 1) AS INTEGER) NULLS LAST, metric
