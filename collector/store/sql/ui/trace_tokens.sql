-- name: trace_tokens
-- description: The tokens each of these traces spent (the sum over its steps).
-- params: $ids VARCHAR[]
-- returns: trace_id, tokens
SELECT trace_id, sum(total_tokens) FROM steps WHERE trace_id IN (SELECT unnest($ids)) GROUP BY 1
