-- name: insert_rows
-- description: Compute facts and add them to {table}: {columns} of the rows {body} (a bundled
--   query's statement) gives, with the verdicts it reads (evaluations) those of the traces registered as
--   _done, or every trace's when $all. $since: a time none of those traces' current verdicts was written
--   before (their least verdicts_since, or the batch's time for traces evaluated the first time); rows
--   are appended in the order they are written, so the scan skips the row groups before it (NULL: every
--   row is read). The statement reads those traces' rows of traces too, each as settled: a fact does
--   not depend on whether its trace is settled now (a trace reopened by a late span is), the view
--   over the facts joins traces and asks that itself; their rows of traces, steps and documents are
--   read from $received_since on (a time none of their spans was received before; NULL: every row).
-- params: $all BOOLEAN = false, $since TIMESTAMP = NULL, $received_since TIMESTAMP = NULL
-- returns: count
INSERT INTO {table} ({columns})
WITH evaluations AS (
    SELECT *
    FROM main.evaluations
    WHERE ($all OR trace_id IN (SELECT trace_id FROM _done))
      AND ($since IS NULL OR evaluated_at >= $since)
),
traces AS (
    SELECT * REPLACE (coalesce(settled_at, TIMESTAMP '1970-01-01') AS settled_at)
    FROM main.traces
    WHERE ($all OR trace_id IN (SELECT trace_id FROM _done))
      AND ($received_since IS NULL OR first_received_at >= $received_since)
),
steps AS (
    SELECT *
    FROM main.steps
    WHERE ($all OR trace_id IN (SELECT trace_id FROM _done))
      AND ($received_since IS NULL OR received_at >= $received_since)
),
step_documents AS (
    SELECT *
    FROM main.step_documents
    WHERE ($all OR trace_id IN (SELECT trace_id FROM _done))
      AND ($received_since IS NULL OR received_at >= $received_since)
)
SELECT {columns}
FROM ({body})
