-- name: human_labels
-- description: Every human label, keyed by trace, metric and normalized item ('' for a whole answer).
-- params: none
-- returns: trace_id, metric, item, label, anchor
SELECT trace_id, metric, coalesce(claim_norm, ''), label, anchor FROM human_labels
