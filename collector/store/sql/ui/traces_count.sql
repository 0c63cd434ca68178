-- name: traces_count
-- description: How many traces of the trace list match the filters.
-- params: $service VARCHAR = NULL, $run_id VARCHAR = NULL, $since VARCHAR = NULL, $until VARCHAR = NULL,
--   $q VARCHAR = NULL, $feedback BOOLEAN = NULL, $root_cause VARCHAR = NULL
-- returns: count
SELECT count(*)
FROM traces t
WHERE ($service IS NULL OR t.service_name = $service)
  AND ($run_id IS NULL OR t.run_id = $run_id)
  AND ($since IS NULL OR t.start_time >= CAST($since AS TIMESTAMP))
  AND ($until IS NULL OR t.start_time < CAST($until AS TIMESTAMP))
  AND ($q IS NULL OR contains(lower(coalesce(t.query_text, '')), lower($q))
       OR contains(lower(coalesce(t.answer_text, '')), lower($q)) OR t.trace_id = lower($q))
  AND ($feedback IS NULL OR $feedback = EXISTS (SELECT 1 FROM feedback f WHERE f.trace_id = t.trace_id))
  AND ($root_cause IS NULL OR t.trace_id IN (SELECT trace_id FROM attribution WHERE root_cause = $root_cause))
