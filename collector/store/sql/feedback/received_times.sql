-- name: received_times
-- description: When the first and last spans of the traces registered as _fb_ids were received; the
--   caller appends a first_received_at range (traces_in_range).
-- params: $lo TIMESTAMP = NULL, $hi TIMESTAMP = NULL
-- returns: first_received_at, last_received_at
SELECT first_received_at, last_received_at FROM traces WHERE trace_id IN (SELECT trace_id FROM _fb_ids)
