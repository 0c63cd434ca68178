-- name: insert_changed
-- description: Add to {table} the facts of the traces in facts_changed ({body}: changed_rows).
-- params: none
-- returns: count
INSERT INTO {table} ({columns})
{body}
