-- name: changed_state
-- description: How many traces facts_changed names and the least time their rows are read from (the least
--   `since` or `received_since`): what decides whether a write flushes them.
-- params: none
-- returns: traces, oldest
SELECT count(DISTINCT trace_id), least(min(since), min(received_since))
FROM facts_changed
