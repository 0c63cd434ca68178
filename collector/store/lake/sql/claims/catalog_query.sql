-- name: catalog_query
-- description: The rows of a query of the catalog's PostgreSQL ($sql, as catalog_execute) in the
--   catalog database attached as lake_catalog.
-- params: $sql VARCHAR
-- returns: the query's columns
SELECT * FROM postgres_query('lake_catalog', $sql)
