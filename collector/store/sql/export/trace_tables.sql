-- name: trace_tables
-- description: The base tables with a trace_id column: the per-trace tables that export writes and
--   retention deletes from.
-- params: none
-- returns: table_name
SELECT DISTINCT c.table_name FROM information_schema.columns c JOIN information_schema.tables t ON t.table_name = c.table_name AND t.table_schema = c.table_schema WHERE c.column_name = 'trace_id' AND t.table_type = 'BASE TABLE' AND t.table_schema = 'main' ORDER BY c.table_name
