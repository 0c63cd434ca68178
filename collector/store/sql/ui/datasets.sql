-- name: datasets
-- description: The datasets gold cases were loaded from.
-- params: none
-- returns: dataset
SELECT DISTINCT dataset FROM gold_cases WHERE dataset IS NOT NULL ORDER BY 1
