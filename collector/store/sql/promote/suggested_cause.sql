-- name: suggested_cause
-- description: The root cause live attribution suggests for a trace (no row: not evaluated), the
--   cause a promotion confirms when the reviewer names none. Run through the query interface (the
--   server's SQL API or a file opened read-only).
-- params: $t VARCHAR
-- returns: root_cause
SELECT root_cause FROM live_attribution WHERE trace_id = $t
