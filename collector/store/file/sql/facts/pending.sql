-- name: pending
-- description: The facts tables still to be computed in full (migration 027's facts_pending).
-- params: none
-- returns: name
SELECT name FROM facts_pending ORDER BY name
