-- name: ui_review_queue
-- description: Items of the judge for a human to label, none labelled yet: up to half of $size where the
--   judge changed its label most recently (its latest verdict on the item differs from the one before,
--   from an earlier judge version or re-scoring; ranked by how far the value moved), the rest drawn at
--   random from the other items with $seed (the ISO week by default), so a week's queue is stable.
-- grain: one row per item (trace_id, metric, claim)
-- params: $size INTEGER = 30, $seed VARCHAR = ''
-- returns: trace_id, span_id, metric, claim, label, value, model, prompt_version, scored_at,
--   previous_label, previous_version, why (changed or random)
WITH v AS (
    SELECT *, coalesce(claim_norm, '') AS item,
        row_number() OVER (PARTITION BY trace_id, metric, coalesce(claim_norm, '') ORDER BY scored_at DESC) AS rn
    FROM judge_verdicts
),
items AS (
    SELECT l.trace_id, l.span_id, l.metric, l.claim, l.item, l.label, l.value, l.model, l.prompt_version,
        l.scored_at, p.label AS previous_label, p.model || ' @ ' || p.prompt_version AS previous_version,
        p.label IS NOT NULL AND p.label <> l.label AS changed,
        abs(coalesce(l.value, 0) - coalesce(p.value, l.value, 0)) AS moved
    FROM v l
    LEFT JOIN v p ON p.trace_id = l.trace_id AND p.metric = l.metric AND p.item = l.item AND p.rn = 2
    WHERE l.rn = 1
      AND NOT EXISTS (
          SELECT 1 FROM human_labels h
          WHERE h.trace_id = l.trace_id AND h.metric = l.metric AND coalesce(h.claim_norm, '') = l.item
      )
),
changed AS (
    SELECT *, 'changed' AS why FROM items WHERE changed
    ORDER BY moved DESC, scored_at DESC, trace_id, item
    LIMIT $size // 2
),
drawn AS (
    SELECT *, 'random' AS why FROM items
    WHERE NOT EXISTS (SELECT 1 FROM changed c WHERE c.trace_id = items.trace_id AND c.metric = items.metric AND c.item = items.item)
    ORDER BY hash(trace_id || metric || item || $seed), trace_id, item
    LIMIT $size - (SELECT count(*) FROM changed)
)
SELECT trace_id, span_id, metric, claim, label, value, model, prompt_version, scored_at, previous_label,
    previous_version, why
FROM (SELECT * FROM changed UNION ALL SELECT * FROM drawn)
ORDER BY why, trace_id, claim
