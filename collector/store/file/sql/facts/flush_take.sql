-- name: flush_take
-- description: Keep, for one flush, the rows of {table} (evaluations, traces, steps or step_documents)
--   that the traces in facts_changed have in it ({rows}: changed_rows with {table} as its body), as the
--   temporary table _flush_{table}: every facts table of the flush reads them (flush_rows), so the
--   table is scanned once a flush rather than once for each pass of each facts statement. Holds the
--   changed traces' rows only (at most FLUSH_TRACES traces' and what a write adds to them).
-- params: none
-- returns: count
CREATE OR REPLACE TEMP TABLE _flush_{table} AS
{rows}
