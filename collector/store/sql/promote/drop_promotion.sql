-- name: drop_promotion
-- description: Delete the promotion record of a case before insert_promotion writes it again (a case
--   promoted again replaces its record; a lake table has no key for INSERT OR REPLACE).
-- params: $case_id VARCHAR
-- returns: nothing
DELETE FROM gold_promotions WHERE case_id = $case_id
