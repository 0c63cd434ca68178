-- name: item_case
-- description: The gold case a triage screen's trace joins already, if any, and its root cause.
-- params: $t VARCHAR
-- returns: case_id, root_cause
SELECT case_id, root_cause FROM attribution WHERE trace_id = $t
