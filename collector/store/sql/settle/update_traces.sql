-- name: update_traces
-- description: Each settled trace's row takes its assembly (the registered table _asm): query,
--   answer, user scope, the count it saw, and $now as settled_at.
-- params: $now TIMESTAMP
-- returns: nothing
UPDATE traces SET query_text = a.query_text, query_norm = a.query_norm, answer_text = a.answer_text, answer_span_id = a.answer_span_id, user_scope = a.user_scope, assembled_spans = a.assembled_spans, settled_at = $now FROM _asm a WHERE traces.trace_id = a.trace_id
