-- name: facts_stamps
-- description: What tells that a trace's verdicts or its stored row changed since the dashboard's facts
--   were computed: its evaluation generation (raised with every write of its verdicts, in the same
--   transaction: collector/store/verdicts.py), when it was last evaluated and settled, its start time;
--   and since when it has verdicts (migration 007), which bounds reading them again. Traces of
--   generation 0 have no verdict and are left out.
-- grain: one row per evaluated trace
-- params: none
-- returns: trace_id, eval_generation, evaluated_at, settled_at, start_time, verdicts_since
SELECT trace_id, eval_generation, evaluated_at, settled_at, start_time, verdicts_since
FROM traces
WHERE coalesce(eval_generation, 0) > 0
