-- name: trace_rows_summed
-- description: The traces row of each trace of a batch, from the per-request summaries registered
--   as _in_traces (schema.trace_summary): a commit merges several requests, and one trace may be in
--   more than one of them. The rows insert_traces and merge_traces write.
-- params: none
-- returns: the traces columns, in insert_traces' order
SELECT trace_id, min(first_received_at), max(last_received_at), sum(span_count), sum(error_count),
       bool_or(has_root), any_value(root_span_id), any_value(root_name), min(start_time), max(end_time),
       coalesce(any_value(root_service), any_value(service_name)), any_value(case_id), any_value(run_id),
       any_value(session_id), any_value(user_id)
FROM _in_traces GROUP BY trace_id
