-- name: categories
-- description: The categories of the gold cases.
-- params: none
-- returns: category
SELECT DISTINCT category FROM gold_cases WHERE category IS NOT NULL ORDER BY 1
