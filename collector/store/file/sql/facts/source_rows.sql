-- name: source_rows
-- description: Every row of {table}: the body flush_take puts in changed_rows, whose common table
--   expressions of the same name stand for the changed traces' rows of it.
-- params: none
-- returns: the columns of {table}
SELECT * FROM {table}
