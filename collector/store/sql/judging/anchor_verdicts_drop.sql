-- name: anchor_verdicts_drop
-- description: Delete the anchor verdicts of a judge version before it scores the anchor set again.
-- params: none (positional ?: model, prompt_version)
-- returns: nothing
DELETE FROM judge_verdicts WHERE source = 'anchor' AND model = ? AND prompt_version = ?
