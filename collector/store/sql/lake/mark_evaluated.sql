-- name: mark_evaluated
-- description: The traces of an evaluated batch (registered as _done) each get a trace_evals row: their
--   generation one up, $now, and the span count they were assembled with as the count evaluated.
-- params: $now TIMESTAMP
-- returns: nothing
INSERT INTO trace_evals (trace_id, event, generation, evaluated_at, evaluated_spans)
SELECT d.trace_id, 'evaluated', coalesce(s.eval_generation, 0) + 1, $now, s.assembled_spans
FROM (SELECT DISTINCT trace_id FROM _done) d LEFT JOIN trace_state s ON s.trace_id = d.trace_id
