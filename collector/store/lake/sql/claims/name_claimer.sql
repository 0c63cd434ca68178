-- name: name_claimer
-- description: This instance's holder name, claim length and round cap, as the one-row table every
--   cursor of the instance reads (lake.claims: the settle loop's and the writer's claim as one holder).
--   In the instance's in-memory database, which user SQL cannot read (sqlguard.HIDDEN_CATALOGS).
-- params: $h VARCHAR, $s DOUBLE, $m BIGINT
-- returns: nothing
CREATE OR REPLACE TABLE memory.main.ragfault_claimer AS SELECT $h AS holder, $s::DOUBLE AS seconds, $m::BIGINT AS max_traces
