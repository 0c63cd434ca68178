-- name: fill_rows
-- description: Compute {table} in full: {columns} of the rows {body} (a bundled query's statement) gives
--   over every verdict, step and document, each trace read as settled (as gather_traces reads them).
-- params: none
-- returns: count
INSERT INTO {table} ({columns})
WITH traces AS (
    SELECT * REPLACE (coalesce(settled_at, TIMESTAMP '1970-01-01') AS settled_at)
    FROM main.traces
)
SELECT {columns}
FROM ({body})
