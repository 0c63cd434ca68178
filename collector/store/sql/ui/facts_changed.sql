-- name: facts_changed
-- description: The traces whose stamp (facts_stamps) differs from the one the facts were computed with
--   (registered as _ui_stamps): evaluated again, settled again, new, or gone.
-- grain: one row per changed trace
-- params: none
-- returns: trace_id
SELECT coalesce(n.trace_id, o.trace_id) AS trace_id
FROM _ui_new_stamps n
FULL OUTER JOIN _ui_stamps o ON o.trace_id = n.trace_id
WHERE n.trace_id IS NULL OR o.trace_id IS NULL
   OR n.eval_generation IS DISTINCT FROM o.eval_generation
   OR n.evaluated_at IS DISTINCT FROM o.evaluated_at
   OR n.settled_at IS DISTINCT FROM o.settled_at
   OR n.start_time IS DISTINCT FROM o.start_time
