-- name: facts_layer_parts
-- description: The verdict rows of _ui_layers (facts_layers; registered as _ui_rows) summed per run,
--   dataset, category, metric and
--   hour of the trace's start: what dash_layer_metrics adds up instead of the rows themselves (each
--   aggregate of queries/layer_metrics.sql is a sum of these: a mean is value_sum / value_n, a count a
--   sum of counts; a sum over no value stays NULL).
-- grain: one row per run_id, dataset, category, metric and hour
-- params: none
-- returns: run_id, dataset, category, metric, hour, n_ok, value_n, value_sum, numerator, denominator, n_na
SELECT
    run_id,
    dataset,
    category,
    metric,
    hour,
    count(*) FILTER (WHERE status = 'ok') AS n_ok,
    count(value) FILTER (WHERE status = 'ok') AS value_n,
    sum(value) FILTER (WHERE status = 'ok') AS value_sum,
    sum(numerator) FILTER (WHERE status = 'ok') AS numerator,
    sum(denominator) FILTER (WHERE status = 'ok') AS denominator,
    count(*) FILTER (WHERE status = 'not_applicable') AS n_na
FROM _ui_rows
GROUP BY run_id, dataset, category, metric, hour
