-- name: cases_page
-- description: A page of the case table (the attribution view filtered), with the count of all the
--   rows that match; {order} is one of the fixed sorts of collector.store.ui.CASE_SORTS (a list of
--   columns: the root causes sort in the order of $causes, by _cause_rank).
-- params: $run_id VARCHAR = NULL, $since VARCHAR = NULL, $until VARCHAR = NULL, $dataset VARCHAR = NULL,
--   $root_cause VARCHAR = NULL, $layer VARCHAR = NULL, $category VARCHAR = NULL, $q VARCHAR = NULL,
--   $causes VARCHAR[] = NULL, $limit INTEGER, $offset INTEGER
-- returns: trace_id, case_id, run_id, category, root_cause, failing_layers, start_time, query_text,
--   candidate_recall, context_recall, context_retention, answer_support, fact_coverage, _total
WITH f AS MATERIALIZED (
    SELECT trace_id, case_id, run_id, category, root_cause, failing_layers, start_time, query_text,
           candidate_recall, context_recall, context_retention, answer_support, fact_coverage,
           array_position($causes, root_cause) AS _cause_rank
    FROM attribution
    WHERE ($run_id IS NULL OR run_id = $run_id)
  AND ($since IS NULL OR start_time >= CAST($since AS TIMESTAMP))
  AND ($until IS NULL OR start_time < CAST($until AS TIMESTAMP))
  AND ($dataset IS NULL OR case_id IN (SELECT case_id FROM gold_cases WHERE dataset = $dataset))
  AND ($root_cause IS NULL OR root_cause = $root_cause)
  AND ($layer IS NULL OR list_contains(failing_layers, $layer))
  AND ($category IS NULL OR coalesce(category, '(none)') = $category)
  AND ($q IS NULL OR contains(lower(coalesce(query_text, '')), lower($q)) OR lower(case_id) = lower($q)))
SELECT * EXCLUDE (_cause_rank), (SELECT count(*) FROM f) AS _total FROM f ORDER BY {order} LIMIT $limit OFFSET $offset
