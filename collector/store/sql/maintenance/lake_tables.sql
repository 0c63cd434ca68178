-- name: lake_tables
-- description: The tables of the lake (as it is attached: lake.LAKE).
-- params: none
-- returns: table_name
SELECT table_name FROM duckdb_tables() WHERE database_name = 'lake'
