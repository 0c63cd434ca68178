-- name: verdicts_since
-- description: Since when a trace has verdicts (migration 007), to bound the scan of its verdicts.
-- params: $t VARCHAR
-- returns: verdicts_since
SELECT verdicts_since FROM traces WHERE trace_id = $t
