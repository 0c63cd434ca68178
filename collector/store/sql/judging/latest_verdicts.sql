-- name: latest_verdicts
-- description: The latest judge verdict of each item per judge version (model, prompt version); with
--   $anchor_only, of the anchor verdicts only.
-- params: $anchor_only BOOLEAN
-- returns: trace_id, metric, item, label, model, prompt_version, source
SELECT trace_id, metric, coalesce(claim_norm, '') AS item, label, model, prompt_version, source
FROM judge_verdicts
WHERE NOT $anchor_only OR source = 'anchor'
QUALIFY row_number() OVER (PARTITION BY trace_id, metric, coalesce(claim_norm, ''), model, prompt_version
                           ORDER BY scored_at DESC, source) = 1
