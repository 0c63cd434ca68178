-- name: review_verdict
-- description: A trace's verdict on one metric (the trace-level row first).
-- params: $t VARCHAR, $m VARCHAR
-- returns: label, reason, details, value, passed
SELECT label, reason, details, value, passed FROM evaluations WHERE trace_id = $t AND metric = $m
ORDER BY span_id NULLS FIRST
LIMIT 1
