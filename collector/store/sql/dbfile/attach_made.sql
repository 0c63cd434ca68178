-- name: attach_made
-- description: A new file attached as made, to create it as a demo database (mark_demo). {path} is the
--   file as a quoted string literal: ATTACH takes no parameter for its file.
-- params: none
-- returns: nothing
ATTACH {path} AS made (TYPE DUCKDB)
