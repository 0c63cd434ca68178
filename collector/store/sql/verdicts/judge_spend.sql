-- name: judge_spend
-- description: Judge HTTP calls recorded and their total cost in USD (judge_calls).
-- params: none
-- returns: calls, cost_usd
SELECT count(*), coalesce(sum(cost_usd), 0) FROM judge_calls
