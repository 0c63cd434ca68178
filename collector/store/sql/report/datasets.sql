-- name: datasets
-- description: Every dataset gold cases were loaded into, with its case count, the most recently loaded
--   first (the names a report filter may take).
-- params: none
-- returns: dataset, cases
SELECT dataset, count(*) AS cases FROM gold_cases WHERE dataset IS NOT NULL GROUP BY ALL
ORDER BY max(loaded_at) DESC
