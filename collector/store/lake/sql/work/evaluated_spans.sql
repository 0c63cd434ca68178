-- name: evaluated_spans
-- description: Record the span count the cheap tier loaded for each trace (registered as _sdone:
--   trace_id, n) as a trace_evals row; a span that settled meanwhile re-queues it.
--   Pair: verdicts/evaluated_spans (tests/store/test_statement_pairs.py holds their shared conditions equal).
-- params: none
-- returns: nothing
INSERT INTO trace_evals (trace_id, event, generation, evaluated_at, evaluated_spans)
SELECT trace_id, 'loaded', NULL, NULL, n FROM _sdone
