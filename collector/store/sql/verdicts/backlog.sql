-- name: backlog
-- description: How many settled traces wait for the cheap tier (not those waiting to be assembled
--   again), and the settle time of the oldest.
-- params: none
-- returns: waiting, oldest_settled_at
SELECT count(*), min(settled_at)
FROM traces
WHERE settled_at IS NOT NULL AND assembled_spans IS NOT NULL
  AND (evaluated_spans IS NULL OR evaluated_spans <> assembled_spans)
