-- Migration 007: each trace says since when its verdicts were written.
--
-- Re-evaluating a trace (a late span, a reloaded gold case, the judge tier, `ragfault evaluate`)
-- moves its earlier verdicts to evaluation_history. Finding them by trace id read every row of
-- `evaluations` (trace ids are random, so the min/max statistics of a row group skip none): with
-- ten million rows, a third of a second of the writer's time for every such batch, however small.
-- `verdicts_since` is the earliest `evaluated_at` of any verdict ever written for the trace (the
-- least of the times it was evaluated, whatever the clocks did), so every row it still has in
-- `evaluations` was written at or after it; rows are appended in the order they are written, so a
-- bound on `evaluated_at` lets a scan skip the row groups before it. NULL: not known (a trace
-- never evaluated, or evaluated before this migration with no verdict left): searched everywhere.
ALTER TABLE traces ADD COLUMN verdicts_since TIMESTAMP;

UPDATE traces SET verdicts_since = e.since
FROM (SELECT trace_id, min(evaluated_at) AS since FROM evaluations GROUP BY trace_id) e
WHERE e.trace_id = traces.trace_id;
