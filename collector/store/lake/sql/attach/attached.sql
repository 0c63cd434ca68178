-- name: attached
-- description: Whether this handle's instance has the lake attached as a DuckLake (1) or not (0): asked
--   once of a handle no store handed out (collector.store.backend).
-- params: none
-- returns: count
SELECT count(*) FROM duckdb_databases() WHERE database_name = 'lake' AND type = 'ducklake'
