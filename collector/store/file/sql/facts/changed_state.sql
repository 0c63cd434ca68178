-- name: changed_state
-- description: How many rows facts_changed holds and the least time they read from (their least
--   `since` or `received_since`): what decides whether a write flushes them.
-- params: none
-- returns: rows, oldest
SELECT count(*), least(min(since), min(received_since))
FROM facts_changed
