-- name: insert_traces
-- description: A batch's traces rows ({body}: trace_rows_summed or trace_rows_once), when none of its
--   traces was written lately: ON CONFLICT costs about 6 ms a commit even when nothing conflicts (a
--   plain INSERT of the same rows about 2). A trace stored already raises ConstraintException, and
--   the batch is written again through merge_traces.
-- params: none
-- returns: nothing
INSERT INTO traces (trace_id, first_received_at, last_received_at, span_count, error_count, has_root,
                    root_span_id, root_name, start_time, end_time, service_name, case_id, run_id,
                    session_id, user_id)
{body}
