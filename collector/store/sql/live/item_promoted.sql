-- name: item_promoted
-- description: Whether a triage screen's trace was promoted to a gold case already, and as what.
-- params: $t VARCHAR
-- returns: case_id, cause, suggested_cause, promoted_by, promoted_at
SELECT case_id, cause, suggested_cause, promoted_by, promoted_at FROM gold_promotions WHERE trace_id = $t
