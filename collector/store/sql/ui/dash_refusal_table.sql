-- name: dash_refusal_table
-- description: queries/refusal_table.sql over the dashboard's facts (_ui_refusals: the cells that query
--   counts, with their category, run, dataset and start time): the same cross-table and rates, a rate
--   with an empty denominator NULL (not applicable); tests/ui/test_facts.py checks both agree.
-- grain: one row per category, plus one row with category '(all)'
-- params: $run_id VARCHAR = NULL, $dataset VARCHAR = NULL, $since TIMESTAMP = NULL, $until TIMESTAMP = NULL
-- returns: category, answerable_answered, answerable_refused, unanswerable_answered, unanswerable_refused,
--   answer_accuracy, accurate_answers, answerable, over_refusal_rate, correct_refusal_rate, unanswerable
WITH cells AS (
    SELECT category, cell, all_facts
    FROM _ui_refusals
    WHERE ($run_id IS NULL OR run_id = $run_id)
      AND ($dataset IS NULL OR dataset = $dataset)
      AND ($since IS NULL OR start_time >= CAST($since AS TIMESTAMP))
      AND ($until IS NULL OR start_time < CAST($until AS TIMESTAMP))
),
per AS (
    SELECT
        category,
        count(*) FILTER (WHERE cell = 'answered_answerable') AS answerable_answered,
        count(*) FILTER (WHERE cell = 'refused_answerable') AS answerable_refused,
        count(*) FILTER (WHERE cell = 'answered_unanswerable') AS unanswerable_answered,
        count(*) FILTER (WHERE cell = 'refused_unanswerable') AS unanswerable_refused,
        count(*) FILTER (WHERE cell = 'answered_answerable' AND all_facts) AS accurate_answers
    FROM cells
    GROUP BY GROUPING SETS ((category), ())
)
SELECT
    coalesce(category, '(all)') AS category,
    answerable_answered,
    answerable_refused,
    unanswerable_answered,
    unanswerable_refused,
    accurate_answers / nullif(answerable_answered + answerable_refused, 0) AS answer_accuracy,
    accurate_answers,
    answerable_answered + answerable_refused AS answerable,
    answerable_refused / nullif(answerable_answered + answerable_refused, 0) AS over_refusal_rate,
    unanswerable_refused / nullif(unanswerable_answered + unanswerable_refused, 0) AS correct_refusal_rate,
    unanswerable_answered + unanswerable_refused AS unanswerable
FROM per
ORDER BY category IS NULL DESC, category
