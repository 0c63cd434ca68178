-- name: review_context
-- description: The text of a trace's final context, in order.
-- params: $t VARCHAR
-- returns: content
SELECT content FROM step_documents WHERE trace_id = $t AND stage = 'context' ORDER BY span_id, position
