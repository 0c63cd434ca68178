-- name: probe_tables
-- description: The tables and views of the attached probe file, by name: what tells a ragfault
--   database (schema_migrations), a demo's (ragfault_demo), an empty one and another application's.
-- params: none
-- returns: table_name
SELECT table_name FROM information_schema.tables WHERE table_catalog = 'probe' ORDER BY 1
