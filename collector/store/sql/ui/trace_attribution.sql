-- name: trace_attribution
-- description: A trace's root cause, failing layers and evidence.
-- params: $t VARCHAR
-- returns: root_cause, failing_layers, evidence
SELECT root_cause, failing_layers, evidence FROM attribution WHERE trace_id = $t
