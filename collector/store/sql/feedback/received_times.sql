-- name: received_times
-- description: When the first and last spans of the traces registered as _fb_ids were received; within
--   a range of first_received_at: $lo, $hi: the range of their first_received_at read with the ids (NULL: the whole table); $outside: the traces outside it instead (reader.traces_in_range).
-- params: $lo TIMESTAMP = NULL, $hi TIMESTAMP = NULL, $outside BOOLEAN = false
-- returns: first_received_at, last_received_at
SELECT first_received_at, last_received_at FROM traces WHERE trace_id IN (SELECT trace_id FROM _fb_ids)
  AND ($lo IS NULL
       OR (NOT $outside AND first_received_at BETWEEN $lo AND $hi)
       OR ($outside AND (first_received_at IS NULL OR first_received_at NOT BETWEEN $lo AND $hi)))
