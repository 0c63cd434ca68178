-- name: current
-- description: The rows of a facts view as they are now: the rows kept in {table} for the traces no
--   write changed since their facts were computed, and for the traces in facts_changed the rows their
--   definition gives now ({body}: changed_rows). The facts views read this, so a write's changes show
--   at once though a flush computes them later.
-- params: none
-- returns: the columns of {table}
SELECT {columns}
FROM {table}
WHERE trace_id NOT IN (SELECT trace_id FROM facts_changed)
UNION ALL
SELECT {columns}
FROM ({body})
