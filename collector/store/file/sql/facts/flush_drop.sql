-- name: flush_drop
-- description: Drop the changed traces' rows of {table} kept for a flush (flush_take).
-- params: none
-- returns: nothing
DROP TABLE IF EXISTS _flush_{table}
