-- name: version_seen
-- description: Record a judge version (model, prompt version) the first time it is seen, not trusted
--   yet (a SELECT guarded by NOT EXISTS rather than ON CONFLICT, which needs a key a lake table has
--   not got).
-- params: $model VARCHAR, $prompt_version VARCHAR, $first_seen TIMESTAMP
-- returns: nothing
INSERT INTO judge_versions (model, prompt_version, first_seen, trusted)
SELECT $model, $prompt_version, $first_seen, false
WHERE NOT EXISTS (SELECT 1 FROM judge_versions WHERE model = $model AND prompt_version = $prompt_version)
