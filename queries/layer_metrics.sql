-- name: layer_metrics
-- description: The layered metrics by stage and category, each with its denominator: candidate recall@k
--   (every configured k) and candidate recall (candidate stage), context recall and retention (context
--   stage), answer support (generation; micro over claims), fact coverage. Macro = mean of per-trace
--   values over the traces where the metric applied (n_traces); micro = sum of numerators / sum of
--   denominators.
-- grain: one row per category (plus '(all)') and metric
-- params: $run_id VARCHAR = NULL, $dataset VARCHAR = NULL, $since TIMESTAMP = NULL, $until TIMESTAMP = NULL
-- returns: category, stage, metric, macro, micro, numerator, denominator, n_traces, not_applicable
WITH m AS (
    SELECT
        coalesce(g.category, '(none)') AS category,
        e.metric,
        e.status,
        e.value,
        e.numerator,
        e.denominator
    FROM case_verdicts e
    JOIN gold_cases g ON g.case_id = e.case_id
    WHERE (e.span_id IS NULL OR e.metric IN ('answer_support', 'judge_answer_support'))
      AND (e.metric LIKE 'recall@%'  -- every configured k ([evaluation.evaluators.retrieval] ks)
           OR e.metric IN ('candidate_recall', 'context_recall', 'context_retention', 'answer_support',
                           'judge_answer_support', 'fact_coverage'))
      AND ($run_id IS NULL OR e.run_id = $run_id)
      AND ($dataset IS NULL OR g.dataset = $dataset)
      AND ($since IS NULL OR e.trace_id IN (SELECT trace_id FROM traces WHERE start_time >= CAST($since AS TIMESTAMP)))
      AND ($until IS NULL OR e.trace_id IN (SELECT trace_id FROM traces WHERE start_time < CAST($until AS TIMESTAMP)))
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
