-- name: current
-- description: The rows of a facts view as they are now: for the traces in facts_changed the rows their
--   definition gives now ({body}: changed_rows), and the rows kept in {table} for the traces no write
--   changed since their facts were computed. The facts views read this, so a write's changes show at
--   once though a flush computes them later. The computed rows come first: DuckDB 1.5 could wait forever
--   streaming a wide view's rows (seventeen columns and more) with the kept rows first.
-- params: none
-- returns: the columns of {table}
SELECT {columns}
FROM ({body})
UNION ALL
SELECT {columns}
FROM {table}
WHERE trace_id NOT IN (SELECT trace_id FROM facts_changed)
