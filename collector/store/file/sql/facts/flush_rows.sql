-- name: flush_rows
-- description: What {body} (a bundled query's statement) gives, {columns}, for the traces in
--   facts_changed, from their rows kept for this flush (flush_take): the same rows as changed_rows
--   reads, each trace read as settled, so a flush inserts what the facts views compute when read.
-- params: none
-- returns: the columns of {table}
WITH evaluations AS (
    SELECT * FROM _flush_evaluations
),
traces AS (
    SELECT * FROM _flush_traces
),
steps AS (
    SELECT * FROM _flush_steps
),
step_documents AS (
    SELECT * FROM _flush_step_documents
)
SELECT {columns}
FROM ({body})
