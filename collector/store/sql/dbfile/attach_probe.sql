-- name: attach_probe
-- description: A file named by --db attached read-only as probe, on a connection of its own, to read its
--   catalog before a command opens it (read-only: a process writing it answers with its lock first).
--   {path} is the file as a quoted string literal: ATTACH takes no parameter for its file.
-- params: none
-- returns: nothing
ATTACH {path} AS probe (TYPE DUCKDB, READ_ONLY)
