-- name: delete_rows
-- description: Delete the facts of the traces registered as _done ({table}: a facts table), before
--   they are computed again from their verdicts.
-- params: none
-- returns: count
DELETE FROM {table}
WHERE trace_id IN (SELECT trace_id FROM _done)
