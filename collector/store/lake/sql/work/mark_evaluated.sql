-- name: mark_evaluated
-- description: The traces of an evaluated batch (registered as _done) each get a trace_evals row: their
--   generation one up, $now, and the span count they were assembled with as the count evaluated. A
--   judge-tier batch ($judged) is a 'judged' row that keeps the count the cheap tier evaluated (the
--   judge does not take a trace off the cheap tier's queue).
--   Pair: verdicts/mark_evaluated (tests/store/test_statement_pairs.py holds their shared conditions equal).
-- params: $now TIMESTAMP, $judged BOOLEAN
-- returns: nothing
INSERT INTO trace_evals (trace_id, event, generation, evaluated_at, evaluated_spans)
SELECT d.trace_id, CASE WHEN $judged THEN 'judged' ELSE 'evaluated' END, coalesce(s.eval_generation, 0) + 1,
       $now, CASE WHEN $judged THEN s.evaluated_spans ELSE s.assembled_spans END
FROM (SELECT DISTINCT trace_id FROM _done) d LEFT JOIN trace_state s ON s.trace_id = d.trace_id
