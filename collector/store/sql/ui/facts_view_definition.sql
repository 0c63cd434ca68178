-- name: facts_view_definition
-- description: The attribution view's definition on this database: the dashboard's facts hold its rows,
--   so facts saved under another definition are computed again (part of their form).
-- params: none
-- returns: sql
SELECT sql FROM duckdb_views() WHERE view_name = 'attribution' AND NOT internal
