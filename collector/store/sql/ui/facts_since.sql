-- name: facts_since
-- description: Of the traces registered as _ui_ids, how many were evaluated without saying since when
--   they have verdicts, and the least verdicts_since of the others (migration 007): the bound on reading
--   their verdicts again.
-- params: none
-- returns: unknown, since
SELECT count(*) FILTER (WHERE verdicts_since IS NULL AND coalesce(eval_generation, 0) > 0), min(verdicts_since)
FROM traces
WHERE trace_id IN (SELECT trace_id FROM _ui_ids)
