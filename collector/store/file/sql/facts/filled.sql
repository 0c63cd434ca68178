-- name: filled
-- description: A facts table computed in full: it is no longer pending.
-- params: $name VARCHAR
-- returns: nothing
DELETE FROM facts_pending WHERE name = $name
