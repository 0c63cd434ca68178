-- name: anchor_traces
-- description: The traces of the anchor set (human-labelled, anchor), in id order.
-- params: none
-- returns: trace_id
SELECT DISTINCT trace_id FROM human_labels WHERE anchor ORDER BY trace_id
