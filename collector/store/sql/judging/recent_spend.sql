-- name: recent_spend
-- description: The judge calls made since $since, oldest first, with the tokens and USD each cost (the
--   budget starts from the last hour's spend).
-- params: $since TIMESTAMP
-- returns: called_at (epoch seconds), tokens, cost_usd
SELECT epoch(called_at), coalesce(input_tokens, 0) + coalesce(output_tokens, 0), coalesce(cost_usd, 0)
FROM judge_calls
WHERE called_at > $since
ORDER BY called_at
