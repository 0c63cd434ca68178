-- name: cases
-- description: The report's case section: root cause and every failing layer per evaluated trace with
--   a gold case, of a run, a dataset and a time range (any filter may be NULL; bounds as ISO text), in
--   the order of the root causes (the first failing layer first), then by case.
-- params: $run_id VARCHAR = NULL, $since VARCHAR = NULL, $until VARCHAR = NULL, $dataset VARCHAR = NULL
-- returns: case_id, category, root_cause, failing_layers, trace_id
SELECT case_id, category, root_cause, array_to_string(failing_layers, ', ') AS failing_layers, trace_id
FROM attribution
WHERE ($run_id IS NULL OR run_id = $run_id)
  AND ($since IS NULL OR start_time >= CAST($since AS TIMESTAMP))
  AND ($until IS NULL OR start_time < CAST($until AS TIMESTAMP))
  AND ($dataset IS NULL OR case_id IN (SELECT case_id FROM gold_cases WHERE dataset = $dataset))
ORDER BY array_position(
    ['permission_violation', 'no_retrieval', 'evidence_not_in_kb', 'stale_context', 'candidate_miss',
     'not_opened', 'dropped_before_context', 'answered_unanswerable', 'over_refusal', 'unsupported_claims',
     'incomplete_answer', 'invalid_citation', 'insufficient_trace', 'ok'], root_cause), case_id
