-- name: progress
-- description: How far evaluation has come: the traces evaluated, of all the traces stored (what a
--   caller waits on after sending traces).
-- params: none
-- returns: evaluated, traces
SELECT count(*) FILTER (WHERE evaluated_at IS NOT NULL) AS evaluated, count(*) AS traces FROM traces
