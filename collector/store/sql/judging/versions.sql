-- name: versions
-- description: The judge versions seen, oldest first, with when each scored the anchors and whether it is trusted.
-- params: none
-- returns: model, prompt_version, first_seen, anchors_scored_at, trusted
SELECT model, prompt_version, first_seen, anchors_scored_at, trusted FROM judge_versions ORDER BY first_seen
