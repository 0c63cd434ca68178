-- name: trace_causes
-- description: The root cause of each of these traces.
-- params: $ids VARCHAR[]
-- returns: trace_id, root_cause
SELECT trace_id, root_cause FROM attribution WHERE trace_id IN (SELECT unnest($ids))
