-- name: checkpoint_made
-- description: The made file written whole (no write-ahead log left beside it) before it is detached.
-- params: none
-- returns: nothing
CHECKPOINT made
