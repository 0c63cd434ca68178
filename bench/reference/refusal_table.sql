-- The formulation of queries/refusal_table.sql over every verdict (evaluations), kept as the definition the
-- bundled query must equal (bench/same_results.py; tests/queries/test_same_results.py): the bundled query
-- reads the same rows from the view case_verdicts. Change both together.
-- name: refusal_table
-- description: The answerable x answered/refused cross-table and its three rates, overall and per category.
--   answer_accuracy = answerable cases answered with every required fact / answerable cases;
--   over_refusal_rate = answerable cases refused / answerable cases;
--   correct_refusal_rate = unanswerable cases refused / unanswerable cases.
--   A rate whose denominator is 0 is NULL (not applicable).
-- grain: one row per category, plus one row with category '(all)'
-- params: $run_id VARCHAR = NULL, $dataset VARCHAR = NULL, $since TIMESTAMP = NULL, $until TIMESTAMP = NULL
-- returns: category, answerable_answered, answerable_refused, unanswerable_answered, unanswerable_refused,
--   answer_accuracy, accurate_answers, answerable, over_refusal_rate, correct_refusal_rate, unanswerable
WITH cells AS (
    -- every trace's cell with what the filters below test (the web UI's dashboard keeps these rows
    -- and runs the rest of this query over them)
    SELECT
        e.trace_id,
        e.run_id,
        g.dataset,
        coalesce(g.category, '(none)') AS category,
        e.label AS cell,
        coalesce(fc.passed, fc.status = 'not_applicable') AS all_facts
    FROM evaluations e
    JOIN gold_cases g ON g.case_id = e.case_id
    LEFT JOIN evaluations fc
        ON fc.trace_id = e.trace_id AND fc.metric = 'fact_coverage' AND fc.span_id IS NULL
    WHERE e.metric = 'answerability' AND e.status = 'ok'
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
    WHERE ($run_id IS NULL OR run_id = $run_id)
      AND ($dataset IS NULL OR dataset = $dataset)
      AND ($since IS NULL OR trace_id IN (SELECT trace_id FROM traces WHERE start_time >= CAST($since AS TIMESTAMP)))
      AND ($until IS NULL OR trace_id IN (SELECT trace_id FROM traces WHERE start_time < CAST($until AS TIMESTAMP)))
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
