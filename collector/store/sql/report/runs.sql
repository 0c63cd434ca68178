-- name: runs
-- description: Every run id traces carry, with its trace count, the most recently received first (the
--   names a report filter may take).
-- params: none
-- returns: run_id, traces
SELECT run_id, count(*) AS traces FROM traces WHERE run_id IS NOT NULL GROUP BY ALL
ORDER BY max(first_received_at) DESC
