-- name: catalog_execute
-- description: Run a statement of the catalog's PostgreSQL ($sql: lake.claims builds it, its values
--   quoted as PostgreSQL literals) in the catalog database attached as lake_catalog.
-- params: $sql VARCHAR
-- returns: nothing
CALL postgres_execute('lake_catalog', $sql)
