-- name: trace_rows_once
-- description: trace_rows_summed when each trace has one summary row in _in_traces (a commit of one
--   request): the rows as they are, since the aggregate's hash table costs more than the rest of
--   the statement (about 2 ms a commit).
-- params: none
-- returns: the traces columns, in insert_traces' order
SELECT trace_id, first_received_at, last_received_at, span_count, error_count, has_root, root_span_id,
       root_name, start_time, end_time, coalesce(root_service, service_name), case_id, run_id, session_id,
       user_id
FROM _in_traces
