-- name: trust
-- description: Mark a judge version trusted, with the drift report it was accepted on.
-- params: none (positional ?: trusted_at, drift, model, prompt_version)
-- returns: nothing
UPDATE judge_versions SET trusted = true, trusted_at = ?, drift = ? WHERE model = ? AND prompt_version = ?
