-- name: holds_ragfault
-- description: Whether the opened database is a ragfault store: its own catalog has the migrations
--   table (another DuckDB file has none).
-- params: none
-- returns: tables
SELECT count(*) AS tables FROM duckdb_tables()
WHERE database_name = current_database() AND table_name = 'schema_migrations'
