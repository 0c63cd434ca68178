-- name: earlier
-- description: Whether the traces of a batch being written (registered as _done) were evaluated
--   before, and since when they have verdicts (traces.verdicts_since, migration 007); the caller
--   appends a first_received_at range (traces_in_range).
-- params: $lo TIMESTAMP = NULL, $hi TIMESTAMP = NULL
-- returns: found, before, unknown, since
SELECT count(*),
       count(*) FILTER (WHERE coalesce(eval_generation, 0) > 0),
       count(*) FILTER (WHERE coalesce(eval_generation, 0) > 0 AND verdicts_since IS NULL),
       min(verdicts_since) FILTER (WHERE coalesce(eval_generation, 0) > 0)
FROM traces
WHERE trace_id IN (SELECT trace_id FROM _done)
