-- name: version_seen
-- description: Record a judge version (model, prompt version) the first time it is seen.
-- params: none (positional ?: model, prompt_version, first_seen)
-- returns: nothing
INSERT INTO judge_versions (model, prompt_version, first_seen) VALUES (?, ?, ?) ON CONFLICT DO NOTHING
