-- name: clear
-- description: Every row of a facts table ({table}), before it is computed in full.
-- params: none
-- returns: count
DELETE FROM {table}
