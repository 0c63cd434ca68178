-- name: read_view
-- description: Every row of the view {view}: what running a bundled query that declares a view runs
--   (the same rows as its statement; a file store keeps some views' rows as facts).
-- params: none
-- returns: the columns of {view}
SELECT * FROM {view}
