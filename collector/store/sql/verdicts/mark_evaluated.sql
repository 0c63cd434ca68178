-- name: mark_evaluated
-- description: Raise the generation of the traces registered as _done and record what was evaluated;
--   verdicts_since becomes the least time the trace was evaluated ($now the first time, unknown stays
--   unknown: migration 007). A cheap-tier batch takes the traces off the cheap tier's queue; a judge
--   batch ($judged) leaves it as it is: the cheap tier may not have evaluated the latest assembly.
--   $lo, $hi: the range of their first_received_at read with the ids (NULL: the whole table); $outside: the traces outside it instead (reader.traces_in_range).
--   Pair: lake/work/mark_evaluated (tests/store/test_statement_pairs.py holds their shared conditions equal).
-- params: $now TIMESTAMP, $judged BOOLEAN, $lo TIMESTAMP = NULL, $hi TIMESTAMP = NULL,
--   $outside BOOLEAN = false
-- returns: count
UPDATE traces SET eval_generation = coalesce(eval_generation, 0) + 1, evaluated_at = $now,
       verdicts_since = CASE WHEN coalesce(eval_generation, 0) = 0 THEN $now
                             WHEN verdicts_since IS NULL THEN NULL
                             ELSE least(verdicts_since, $now) END,
       evaluated_spans = CASE WHEN $judged THEN evaluated_spans ELSE assembled_spans END
WHERE trace_id IN (SELECT trace_id FROM _done)
  AND ($lo IS NULL
       OR (NOT $outside AND first_received_at BETWEEN $lo AND $hi)
       OR ($outside AND (first_received_at IS NULL OR first_received_at NOT BETWEEN $lo AND $hi)))
