-- name: count_traces
-- description: How many of the traces registered as _del_ids a lake stores (trace_spans: the traces
--   with spans), counted before their rows are deleted.
-- params: none
-- returns: count
SELECT count(*) FROM trace_spans WHERE trace_id IN (SELECT trace_id FROM _del_ids)
