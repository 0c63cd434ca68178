-- name: insert_requeued
-- description: The trace_evals rows of traces marked waiting again (the ids of requeue, registered as
--   _requeued): no generation, no evaluated count.
-- params: none
-- returns: nothing
INSERT INTO trace_evals (trace_id, event, generation, evaluated_at, evaluated_spans)
SELECT trace_id, 'requeued', NULL, NULL, NULL FROM _requeued
