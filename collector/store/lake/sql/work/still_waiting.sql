-- name: still_waiting
-- description: Of the traces just claimed for settling (the registered table _claimed), those still
--   waiting to be assembled, read after the claim (another collector may have settled one since
--   the candidates were read).
-- params: none
-- returns: trace_id
SELECT trace_id FROM traces
WHERE trace_id IN (SELECT trace_id FROM _claimed)
  AND (settled_at IS NULL OR assembled_spans IS NULL OR assembled_spans < span_count + coalesce(content_events, 0))
