-- name: pending
-- description: The oldest settled traces waiting for the cheap tier (their evaluated span count differs
--   from the assembled one; none while it waits to be assembled again), with that count and when their first span was received.
--   The waiting rows are found and ordered on the narrow columns first, and only theirs are read whole:
--   the one-pass form read every trace's id to filter and sort them, five to seven times the CPU with one
--   to three million traces (bench/README.md, 2026-12-03).
--   Pair: lake/work/pending (tests/store/test_statement_pairs.py holds their shared conditions equal).
-- params: $n INTEGER
-- returns: trace_id, assembled_spans, first_received_at
WITH waiting AS (
    SELECT rowid AS r, settled_at
    FROM traces
    WHERE settled_at IS NOT NULL AND assembled_spans IS NOT NULL
      AND (evaluated_spans IS NULL OR evaluated_spans <> assembled_spans)
    ORDER BY settled_at
    LIMIT $n
)
SELECT t.trace_id, t.assembled_spans, t.first_received_at
FROM waiting w JOIN traces t ON t.rowid = w.r
ORDER BY w.settled_at
