-- name: trace_causes
-- description: The root cause of each of these traces. list_contains, not IN (SELECT unnest($ids)):
--   DuckDB then filters the view's scan of evaluations (310 ms instead of 3.6 s for a page of 50 at
--   100,000 traces, bench/ui.py).
-- params: $ids VARCHAR[]
-- returns: trace_id, root_cause
SELECT trace_id, root_cause FROM attribution WHERE list_contains($ids, trace_id)
