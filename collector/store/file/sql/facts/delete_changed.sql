-- name: delete_changed
-- description: Delete the facts of the traces in facts_changed ({table}: a facts table), before they are
--   computed again.
-- params: none
-- returns: count
DELETE FROM {table}
WHERE trace_id IN (SELECT trace_id FROM facts_changed)
