-- name: evaluated_spans
-- description: Record the span count the cheap tier loaded for each trace (registered as _sdone:
--   trace_id, n); the count loaded, not the current one, so a span that settled meanwhile re-queues it.
--   Pair: lake/work/evaluated_spans (tests/store/test_statement_pairs.py holds their shared conditions equal).
-- params: none
-- returns: nothing
UPDATE traces SET evaluated_spans = d.n FROM _sdone d WHERE traces.trace_id = d.trace_id
