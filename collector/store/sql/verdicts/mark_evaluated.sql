-- name: mark_evaluated
-- description: Raise the generation of the traces registered as _done and record what was evaluated;
--   verdicts_since becomes the least time the trace was evaluated ($now the first time, unknown stays
--   unknown: migration 007). A cheap-tier batch takes the traces off the cheap tier's queue; a judge
--   batch ($judged) leaves it as it is: the cheap tier may not have evaluated the latest assembly.
--   The caller appends a first_received_at range (traces_in_range).
-- params: $now TIMESTAMP, $judged BOOLEAN, $lo TIMESTAMP = NULL, $hi TIMESTAMP = NULL
-- returns: count
UPDATE traces SET eval_generation = coalesce(eval_generation, 0) + 1, evaluated_at = $now,
       verdicts_since = CASE WHEN coalesce(eval_generation, 0) = 0 THEN $now
                             WHEN verdicts_since IS NULL THEN NULL
                             ELSE least(verdicts_since, $now) END,
       evaluated_spans = CASE WHEN $judged THEN evaluated_spans ELSE assembled_spans END
WHERE trace_id IN (SELECT trace_id FROM _done)
