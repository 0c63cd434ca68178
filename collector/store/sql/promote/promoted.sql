-- name: promoted
-- description: The gold cases promoted from live traces, in the gold files' schema (their raw JSON),
--   of one dataset or of all ($dataset NULL), in the order they were promoted.
-- params: $dataset VARCHAR = NULL
-- returns: raw
SELECT g.raw
FROM gold_cases g JOIN gold_promotions p ON p.case_id = g.case_id
WHERE $dataset IS NULL OR g.dataset = $dataset
ORDER BY p.promoted_at, g.case_id
