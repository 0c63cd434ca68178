-- name: negative_feedback
-- description: The traces registered as _s_ids with negative feedback from one of the annotator kinds
--   $k (feedback without a kind counts as HUMAN).
-- params: $k VARCHAR[]
-- returns: trace_id
SELECT DISTINCT trace_id
FROM feedback
WHERE trace_id IN (SELECT trace_id FROM _s_ids) AND negative AND coalesce(annotator_kind, 'HUMAN') IN (SELECT unnest($k))
