-- name: insert_context
-- description: The context documents assembly derived (the registered table _ctx) into step_documents.
-- params: none
-- returns: nothing
INSERT INTO step_documents (trace_id, span_id, stage, position, doc_id, chunk_id, content, score, metadata, source, received_at) SELECT trace_id, span_id, stage, position, doc_id, chunk_id, content, score, metadata, source, received_at FROM _ctx
