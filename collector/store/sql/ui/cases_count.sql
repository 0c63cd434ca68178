-- name: cases_count
-- description: How many rows of the case table match the filters.
-- params: $run_id VARCHAR = NULL, $since VARCHAR = NULL, $until VARCHAR = NULL, $dataset VARCHAR = NULL,
--   $root_cause VARCHAR = NULL, $layer VARCHAR = NULL, $category VARCHAR = NULL, $q VARCHAR = NULL
-- returns: count
SELECT count(*)
FROM attribution
WHERE ($run_id IS NULL OR run_id = $run_id)
  AND ($since IS NULL OR start_time >= CAST($since AS TIMESTAMP))
  AND ($until IS NULL OR start_time < CAST($until AS TIMESTAMP))
  AND ($dataset IS NULL OR case_id IN (SELECT case_id FROM gold_cases WHERE dataset = $dataset))
  AND ($root_cause IS NULL OR root_cause = $root_cause)
  AND ($layer IS NULL OR list_contains(failing_layers, $layer))
  AND ($category IS NULL OR coalesce(category, '(none)') = $category)
  AND ($q IS NULL OR contains(lower(coalesce(query_text, '')), lower($q)) OR lower(case_id) = lower($q))
