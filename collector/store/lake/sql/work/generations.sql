-- name: generations
-- description: The current evaluation generation of the traces registered as _done (0 when never
--   evaluated), read inside the write of a batch: a trace whose generation moved since its rows were
--   fetched was evaluated meanwhile, and the batch's verdicts of it are stale.
-- params: none
-- returns: trace_id, eval_generation
SELECT d.trace_id, coalesce(s.eval_generation, 0)
FROM (SELECT DISTINCT trace_id FROM _done) d LEFT JOIN trace_state s ON s.trace_id = d.trace_id
