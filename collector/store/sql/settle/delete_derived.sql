-- name: delete_derived
-- description: The derived context of the settling traces (_asm) from their last assembly goes
--   before the new one is written. $lo, $hi as in trace_steps.
-- params: $lo TIMESTAMP = NULL, $hi TIMESTAMP = NULL
-- returns: nothing
DELETE FROM step_documents WHERE source = 'derived' AND trace_id IN (SELECT trace_id FROM _asm) AND ($lo IS NULL OR received_at BETWEEN $lo AND $hi)
