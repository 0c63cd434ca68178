-- name: ui_slice_metrics
-- description: Per run and category (plus '(all)'), the trace-level metrics the comparison page sets side
--   by side: the share of traces whose root cause is ok, and the macro mean of candidate recall, context
--   recall, context retention, answer support and fact coverage over the traces where each applied.
-- grain: one row per run_id, category and metric
-- params: $base_run VARCHAR, $new_run VARCHAR
-- returns: run_id, category, metric, value, n (the denominator: traces where the metric applied)
WITH a AS (
    SELECT run_id, coalesce(category, '(none)') AS category, root_cause, candidate_recall, context_recall,
        context_retention, answer_support, fact_coverage
    FROM attribution
    WHERE run_id IN ($base_run, $new_run)
),
both_levels AS (
    SELECT * FROM a
    UNION ALL
    SELECT run_id, '(all)' AS category, root_cause, candidate_recall, context_recall, context_retention,
        answer_support, fact_coverage
    FROM a
),
long AS (
    UNPIVOT (
        SELECT run_id, category, CASE WHEN root_cause = 'ok' THEN 1.0 ELSE 0.0 END AS ok_share,
            candidate_recall, context_recall, context_retention, answer_support, fact_coverage
        FROM both_levels
    ) ON ok_share, candidate_recall, context_recall, context_retention, answer_support, fact_coverage
    INTO NAME metric VALUE v
)
SELECT run_id, category, metric, avg(v) AS value, count(v) AS n
FROM long
GROUP BY run_id, category, metric
ORDER BY category = '(all)' DESC, category, metric, run_id
