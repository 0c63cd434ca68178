-- name: live_window_bound
-- description: Of the settled traces that started at or after $since (what the live page and the live
--   gauges draw), how many were evaluated without saying since when they have verdicts, and the least
--   verdicts_since of the others (migration 007): the bound on reading their verdicts; and the least
--   first_received_at of them all, before which none of their spans, steps or documents was received.
-- params: $since TIMESTAMP
-- returns: unknown, since, received_since
SELECT count(*) FILTER (WHERE verdicts_since IS NULL AND coalesce(eval_generation, 0) > 0), min(verdicts_since),
       min(first_received_at)
FROM traces
WHERE settled_at IS NOT NULL AND start_time >= CAST($since AS TIMESTAMP)
