-- name: trace_gold
-- description: The gold case of a trace's case id, as references/gold_rows reads it, so a trace view does
--   not read every gold case.
-- params: $c VARCHAR
-- returns: case_id, query_norm, query, raw
SELECT case_id, coalesce(query_norm, ''), query, raw FROM gold_cases WHERE case_id = $c
