-- name: insert_rows
-- description: Compute facts and add them to {table}: {columns} of the rows {body} (a bundled
--   query's statement) gives, with the verdicts it reads (evaluations) those of the traces registered as
--   _done, or every trace's when $all. $since: a time none of those traces' current verdicts was written
--   before (their least verdicts_since, or the batch's time for traces evaluated the first time); rows
--   are appended in the order they are written, so the scan skips the row groups before it (NULL: every
--   row is read).
-- params: $all BOOLEAN = false, $since TIMESTAMP = NULL
-- returns: count
INSERT INTO {table} ({columns})
WITH evaluations AS (
    SELECT *
    FROM main.evaluations
    WHERE ($all OR trace_id IN (SELECT trace_id FROM _done))
      AND ($since IS NULL OR evaluated_at >= $since)
)
SELECT {columns}
FROM ({body})
