-- name: trace_feedback
-- description: How many feedback rows each of these traces has.
-- params: $ids VARCHAR[]
-- returns: trace_id, count
SELECT trace_id, count(*) FROM feedback WHERE trace_id IN (SELECT unnest($ids)) GROUP BY 1
