-- name: gold_rows
-- description: Every gold case as stored: its id, normalized query ('' when not filled), query and JSON.
-- params: none
-- returns: case_id, query_norm, query, raw
SELECT case_id, coalesce(query_norm, ''), query, raw FROM gold_cases
