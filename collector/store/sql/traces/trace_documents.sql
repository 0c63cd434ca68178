-- name: trace_documents
-- description: One trace's step documents, by step, stage and position (GET /api/v1/traces/{id}).
-- params: $t VARCHAR
-- returns: every column of step_documents
SELECT * FROM step_documents WHERE trace_id = $t ORDER BY span_id, stage, position
