-- name: case_causes
-- description: The root cause attribution finds for each gold case of a run (what the demo compares
--   with the failures it planted).
-- params: $run_id VARCHAR
-- returns: case_id, root_cause
SELECT case_id, root_cause FROM attribution WHERE run_id = $run_id
