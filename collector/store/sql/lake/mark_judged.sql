-- name: mark_judged
-- description: The traces of a judge-tier batch (registered as _done) each get a trace_evals row: their
--   generation one up and $now, as mark_evaluated gives, but the span count evaluated stays what the
--   cheap tier evaluated (the judge does not take a trace off the cheap tier's queue).
-- params: $now TIMESTAMP
-- returns: nothing
INSERT INTO trace_evals (trace_id, event, generation, evaluated_at, evaluated_spans)
SELECT d.trace_id, 'judged', coalesce(s.eval_generation, 0) + 1, $now, s.evaluated_spans
FROM (SELECT DISTINCT trace_id FROM _done) d LEFT JOIN trace_state s ON s.trace_id = d.trace_id
