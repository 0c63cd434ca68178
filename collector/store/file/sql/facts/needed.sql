-- name: needed
-- description: Whether a batch's new verdicts (registered as _evals) can add attribution rows (one of a
--   gold case, ok or not applicable) and live_attribution rows (one of no stored gold case, ok or not
--   applicable). A trace gets such a row only from such a verdict, so for the traces of a batch whose new
--   verdicts have none and that had no row before, the statement has no row to give.
-- params: none
-- returns: gold, live
SELECT coalesce(bool_or(e.case_id IS NOT NULL), false), coalesce(bool_or(g.case_id IS NULL), false)
FROM _evals e
LEFT JOIN gold_cases g ON g.case_id = e.case_id
WHERE e.status IN ('ok', 'not_applicable')
