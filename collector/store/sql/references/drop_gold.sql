-- name: drop_gold
-- description: Delete the stored gold cases of the ids registered as _gold, before insert_gold writes
--   them again (a reloaded case replaces the old one; on both backends, which the DuckDB-only
--   INSERT OR REPLACE was not: a lake table has no key).
-- params: none
-- returns: nothing
DELETE FROM gold_cases WHERE case_id IN (SELECT case_id FROM _gold)
