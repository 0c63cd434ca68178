-- name: insert_derived
-- description: The context documents a settle round derived (the registered table _ctx) under its
--   $settle_id: step_documents shows those of each trace's current assembly only.
-- params: $settle_id VARCHAR
-- returns: nothing
INSERT INTO derived_documents (trace_id, span_id, stage, position, doc_id, chunk_id, content, score, metadata, source, received_at, settle_id) SELECT trace_id, span_id, stage, position, doc_id, chunk_id, content, score, metadata, source, received_at, $settle_id FROM _ctx
