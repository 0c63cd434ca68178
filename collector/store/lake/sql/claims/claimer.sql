-- name: claimer
-- description: This instance's holder and claim length (name_claimer); no table on an instance that
--   claims nothing (read-only).
-- params: none
-- returns: holder, seconds
SELECT holder, seconds FROM memory.main.ragfault_claimer
