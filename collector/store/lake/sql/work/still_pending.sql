-- name: still_pending
-- description: Of the traces just claimed for evaluation (the registered table _claimed), those still
--   waiting for the cheap tier, read after the claim (another collector may have evaluated one since
--   the candidates were read).
-- params: none
-- returns: trace_id
SELECT trace_id FROM trace_state
WHERE trace_id IN (SELECT trace_id FROM _claimed)
  AND settled_at IS NOT NULL AND assembled_spans IS NOT NULL
  AND (evaluated_spans IS NULL OR evaluated_spans <> assembled_spans)
