-- name: cache_insert
-- description: A judge response cached by its key; a key cached already is kept (a SELECT guarded by
--   NOT EXISTS rather than INSERT OR IGNORE, which needs a key a lake table has not got).
-- params: $key VARCHAR, $task VARCHAR, $model VARCHAR, $prompt_version VARCHAR, $input_hash VARCHAR,
--   $context_hash VARCHAR, $response JSON, $created_at TIMESTAMP
-- returns: nothing
INSERT INTO judge_cache (key, task, model, prompt_version, input_hash, context_hash, response, created_at)
SELECT $key, $task, $model, $prompt_version, $input_hash, $context_hash, $response, $created_at
WHERE NOT EXISTS (SELECT 1 FROM judge_cache WHERE key = $key)
