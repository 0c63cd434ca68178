-- name: insert_settles
-- description: The lake's record of a settle round: each settled trace's assembly (the registered
--   table _asm) as a new trace_settles row under $settle_id, with $now as settled_at (the last row
--   of a trace is its current assembly: lake.schema).
-- params: $settle_id VARCHAR, $now TIMESTAMP
-- returns: nothing
INSERT INTO trace_settles (trace_id, settle_id, query_text, query_norm, answer_text, answer_span_id, user_scope, assembled_spans, settled_at) SELECT trace_id, $settle_id, query_text, query_norm, answer_text, answer_span_id, user_scope, assembled_spans, $now FROM _asm
