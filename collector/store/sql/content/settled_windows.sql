-- name: settled_windows
-- description: Of the traces $t that new GenAI content events name, those settled already, with the
--   range their spans were received in: a record for one of them re-opens it only when its span is
--   stored and came from the record's service (or the record's service is trusted). A list
--   parameter, not a registered table: one trace costs ~0.6 ms instead of ~6 (50,000 traces).
-- params: $t VARCHAR[]
-- returns: trace_id, first_received_at, last_received_at
SELECT trace_id, first_received_at, last_received_at FROM traces WHERE settled_at IS NOT NULL AND trace_id = ANY($t)
