-- name: flush_take
-- description: Keep, for one flush, the rows of {table} (evaluations, traces, steps or step_documents)
--   that the traces in facts_changed have in it ({body}: changed_rows with source_rows as its
--   body), as the temporary table _flush_{table}: every facts table of the flush reads them
--   (flush_rows), so the table is scanned once a flush rather than once for each pass of each facts
--   statement. Holds the changed traces' rows only (FLUSH_TRACES traces and what one write adds).
-- params: none
-- returns: count
CREATE OR REPLACE TEMP TABLE _flush_{table} AS
{body}
