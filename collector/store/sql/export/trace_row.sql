-- name: trace_row
-- description: The traces rows of the traces in _x_ids, with the UTC day of each trace's start (its
--   partition).
-- params: none
-- returns: every column of traces, day
SELECT tr.*, strftime(coalesce(tr.start_time, tr.first_received_at), '%Y-%m-%d') AS day FROM traces tr WHERE tr.trace_id IN (SELECT trace_id FROM _x_ids)
