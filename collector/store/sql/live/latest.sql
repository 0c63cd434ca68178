-- name: latest
-- description: When the latest live trace (settled, no gold case) started: the live page without a
--   window shows the hours up to it.
-- params: none
-- returns: latest
SELECT max(start_time) AS latest FROM traces WHERE case_id IS NULL AND settled_at IS NOT NULL
