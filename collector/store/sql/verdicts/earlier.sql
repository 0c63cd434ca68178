-- name: earlier
-- description: Whether the traces of a batch being written (registered as _done) were evaluated
--   before, and since when they have verdicts (traces.verdicts_since, migration 007);
--   $lo, $hi: the range of their first_received_at read with the ids (NULL: the whole table); $outside: the traces outside it instead (reader.traces_in_range).
-- params: $lo TIMESTAMP = NULL, $hi TIMESTAMP = NULL, $outside BOOLEAN = false
-- returns: found, before, unknown, since, received (the least first_received_at of those found: none of
--   their spans, steps or documents was received before it)
SELECT count(*),
       count(*) FILTER (WHERE coalesce(eval_generation, 0) > 0),
       count(*) FILTER (WHERE coalesce(eval_generation, 0) > 0 AND verdicts_since IS NULL),
       min(verdicts_since) FILTER (WHERE coalesce(eval_generation, 0) > 0),
       min(first_received_at)
FROM traces
WHERE trace_id IN (SELECT trace_id FROM _done)
  AND ($lo IS NULL
       OR (NOT $outside AND first_received_at BETWEEN $lo AND $hi)
       OR ($outside AND (first_received_at IS NULL OR first_received_at NOT BETWEEN $lo AND $hi)))
