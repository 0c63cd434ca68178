-- name: insert_promotion
-- description: Record where a promoted gold case came from, who promoted it and when.
-- params: $case_id VARCHAR, $trace_id VARCHAR, $service_name VARCHAR, $suggested_cause VARCHAR,
--   $cause VARCHAR, $promoted_by VARCHAR, $promoted_at TIMESTAMP
-- returns: nothing
INSERT INTO gold_promotions (case_id, trace_id, service_name, suggested_cause, cause, promoted_by, promoted_at)
VALUES ($case_id, $trace_id, $service_name, $suggested_cause, $cause, $promoted_by, $promoted_at)
