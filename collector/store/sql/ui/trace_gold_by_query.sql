-- name: trace_gold_by_query
-- description: The gold cases a trace without a case id can join, as references/gold_rows reads them:
--   those of its normalized question, and those stored without a normalized question (the evaluators
--   normalize it when they read them).
-- params: $q VARCHAR
-- returns: case_id, query_norm, query, raw
SELECT case_id, coalesce(query_norm, ''), query, raw FROM gold_cases
WHERE query_norm = $q OR coalesce(query_norm, '') = ''
