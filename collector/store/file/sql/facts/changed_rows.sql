-- name: changed_rows
-- description: What {body} (a bundled query's statement) gives, {columns}, for the traces in
--   facts_changed, whose rows a write changed since their facts were computed. The tables it reads
--   stand for those traces' rows: their verdicts from the least `since` of facts_changed on, their
--   rows of traces, steps and documents from its least `received_since` on. Rows are appended in the
--   order they are written, so the scans skip the row groups before ('-infinity' reads every row; with
--   no changed trace, 'infinity' skips them all). Each trace is read as settled: a fact does not
--   depend on whether its trace is settled now (a late span reopens it), the view over the facts asks
--   that itself. What the facts views compute when read (facts/current) and a flush inserts. The
--   expressions are not materialized: each reference of the statement is its own scan, with only the
--   columns and rows it reads (its narrow passes read `details` only from failed verdicts); made once,
--   they read every column of every row, which took twice the time.
-- params: none
-- returns: the columns of {table}
WITH evaluations AS NOT MATERIALIZED (
    SELECT *
    FROM main.evaluations
    WHERE trace_id IN (SELECT trace_id FROM facts_changed)
      AND evaluated_at >= coalesce((SELECT min(since) FROM facts_changed), TIMESTAMP 'infinity')
),
traces AS NOT MATERIALIZED (
    SELECT * REPLACE (coalesce(settled_at, TIMESTAMP '1970-01-01') AS settled_at)
    FROM main.traces
    WHERE trace_id IN (SELECT trace_id FROM facts_changed)
      AND first_received_at >= coalesce((SELECT min(received_since) FROM facts_changed), TIMESTAMP 'infinity')
),
steps AS NOT MATERIALIZED (
    SELECT *
    FROM main.steps
    WHERE trace_id IN (SELECT trace_id FROM facts_changed)
      AND received_at >= coalesce((SELECT min(received_since) FROM facts_changed), TIMESTAMP 'infinity')
),
step_documents AS NOT MATERIALIZED (
    SELECT *
    FROM main.step_documents
    WHERE trace_id IN (SELECT trace_id FROM facts_changed)
      AND received_at >= coalesce((SELECT min(received_since) FROM facts_changed), TIMESTAMP 'infinity')
)
SELECT {columns}
FROM ({body})
