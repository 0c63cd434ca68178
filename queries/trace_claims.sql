-- name: trace_claims
-- description: Who works on a trace now: on a DuckLake store, each claim to settle, evaluate or write
--   the judge's verdicts of a trace (in the catalog database), the collector holding it, since and until
--   when (UTC), whether that collector is alive (alive, gone: its process ended, unknown: judged by
--   expiry alone), whether the claim still keeps the others out, and whom it was taken over from.
--   A single-file store has one process and no claims: empty there.
-- grain: one row per claim (kind, trace_id)
-- params: none
-- returns: kind (settle | evaluate | judge), trace_id, holder, claimed_at, expires_at, holder_state, held, taken_from
-- view: trace_claims
SELECT
    CAST(NULL AS VARCHAR) AS kind,
    CAST(NULL AS VARCHAR) AS trace_id,
    CAST(NULL AS VARCHAR) AS holder,
    CAST(NULL AS TIMESTAMP) AS claimed_at,
    CAST(NULL AS TIMESTAMP) AS expires_at,
    CAST(NULL AS VARCHAR) AS holder_state,
    CAST(NULL AS BOOLEAN) AS held,
    CAST(NULL AS VARCHAR) AS taken_from
WHERE false
