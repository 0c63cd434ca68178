-- name: traces_of_cases
-- description: The traces with a verdict naming one of the gold cases registered as _gold: whether
--   live_attribution counts such a verdict depends on whether its case is stored, so their facts are
--   computed again when cases are loaded.
-- params: none
-- returns: trace_id
SELECT DISTINCT trace_id
FROM evaluations
WHERE case_id IN (SELECT case_id FROM _gold)
