-- name: facts_attribution
-- description: The attribution view (queries/attribution.sql) without the columns the dashboard never
--   reads (evidence, answer_text, missing_fields: the verdicts' details are then not read at all), with
--   the hour of the trace's start and its retrieval x generation cell as queries/quadrant.sql defines
--   it; {ids} keeps to the traces registered as _ui_ids, or is empty.
-- grain: one row per trace_id with a gold case
-- params: none
-- returns: the attribution view's columns but evidence, answer_text and missing_fields; hour,
--   retrieval, generation
SELECT
    * EXCLUDE (evidence, answer_text, missing_fields),
    date_trunc('hour', start_time) AS hour,
    CASE WHEN context_recall IS NULL THEN 'n/a' WHEN context_recall = 1 THEN 'good' ELSE 'bad' END AS retrieval,
    CASE
        WHEN list_has_any(failing_layers,
            ['answered_unanswerable', 'over_refusal', 'unsupported_claims', 'incomplete_answer', 'invalid_citation'])
            THEN 'bad'
        ELSE 'good'
    END AS generation
FROM attribution e
WHERE true {ids}
