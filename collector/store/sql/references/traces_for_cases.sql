-- name: traces_for_cases
-- description: Settled traces joined to the gold cases registered as _cases, by case id or (a trace
--   without one) by normalized query text.
-- params: none
-- returns: trace_id
SELECT DISTINCT t.trace_id
FROM traces t
WHERE t.settled_at IS NOT NULL AND (
      t.case_id IN (SELECT case_id FROM _cases)
   OR (t.case_id IS NULL AND t.query_norm IS NOT NULL AND EXISTS (
        SELECT 1 FROM gold_cases g WHERE g.case_id IN (SELECT case_id FROM _cases) AND g.query_norm = t.query_norm)))
