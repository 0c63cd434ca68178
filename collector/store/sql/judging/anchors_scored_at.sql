-- name: anchors_scored_at
-- description: When a judge version last scored the anchor set.
-- params: none (positional ?: anchors_scored_at, model, prompt_version)
-- returns: nothing
UPDATE judge_versions SET anchors_scored_at = ? WHERE model = ? AND prompt_version = ?
