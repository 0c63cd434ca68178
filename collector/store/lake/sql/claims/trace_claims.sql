-- name: trace_claims
-- description: The claims on the traces of $t (a list of trace ids), read from the trace_claims view
--   (the catalog's claims on a DuckLake store, none on a single file), held ones first: what for,
--   which collector, since and until when, whether it is alive, and whom it was taken over from.
-- params: $t VARCHAR[]
-- returns: kind, trace_id, holder, claimed_at, expires_at, holder_state, held, taken_from
SELECT kind, trace_id, holder, claimed_at, expires_at, holder_state, held, taken_from
FROM trace_claims
WHERE list_contains($t, trace_id)
ORDER BY trace_id, held DESC, claimed_at DESC NULLS LAST, kind
