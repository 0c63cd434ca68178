-- name: clear_changed
-- description: The facts of every trace in facts_changed are computed: none is changed any more.
-- params: none
-- returns: count
DELETE FROM facts_changed
