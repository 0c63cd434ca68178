-- name: insert_rows
-- description: Compute facts and add them to {table}: {columns} of the rows {body} (a bundled query's
--   statement) gives, with the tables it reads standing for the rows of the traces registered as _done:
--   their verdicts from $since on (a time none of their current verdicts was written before: their least
--   verdicts_since, or the batch's time for traces evaluated the first time; rows are appended in the
--   order they are written, so the scan skips the row groups before it), and their rows of traces, steps
--   and documents from $received_since on (a time none of their spans was received before). NULL: every
--   row is read. Each trace is read as settled: a fact does not depend on whether its trace is settled
--   now (a late span reopens it), the view over the facts asks that itself.
-- params: $since TIMESTAMP = NULL, $received_since TIMESTAMP = NULL
-- returns: count
INSERT INTO {table} ({columns})
WITH evaluations AS (
    SELECT *
    FROM main.evaluations
    WHERE trace_id IN (SELECT trace_id FROM _done)
      AND ($since IS NULL OR evaluated_at >= $since)
),
traces AS (
    SELECT * REPLACE (coalesce(settled_at, TIMESTAMP '1970-01-01') AS settled_at)
    FROM main.traces
    WHERE trace_id IN (SELECT trace_id FROM _done)
      AND ($received_since IS NULL OR first_received_at >= $received_since)
),
steps AS (
    SELECT *
    FROM main.steps
    WHERE trace_id IN (SELECT trace_id FROM _done)
      AND ($received_since IS NULL OR received_at >= $received_since)
),
step_documents AS (
    SELECT *
    FROM main.step_documents
    WHERE trace_id IN (SELECT trace_id FROM _done)
      AND ($received_since IS NULL OR received_at >= $received_since)
)
SELECT {columns}
FROM ({body})
