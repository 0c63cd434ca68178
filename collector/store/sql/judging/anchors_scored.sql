-- name: anchors_scored
-- description: How many anchor verdicts this judge version (model, prompt version) has.
-- params: $m VARCHAR, $p VARCHAR
-- returns: count
SELECT count(*) FROM judge_verdicts WHERE source = 'anchor' AND model = $m AND prompt_version = $p
