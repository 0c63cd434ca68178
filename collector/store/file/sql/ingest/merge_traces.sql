-- name: merge_traces
-- description: A batch's traces rows ({body}: trace_rows_summed or trace_rows_once) merged into the
--   stored ones: counts added, the time range widened, the first known root, service and ids kept.
-- params: none
-- returns: nothing
INSERT INTO traces (trace_id, first_received_at, last_received_at, span_count, error_count, has_root,
                    root_span_id, root_name, start_time, end_time, service_name, case_id, run_id,
                    session_id, user_id)
{body}
ON CONFLICT (trace_id) DO UPDATE SET
    first_received_at = least(traces.first_received_at, excluded.first_received_at),
    last_received_at = greatest(traces.last_received_at, excluded.last_received_at),
    span_count       = traces.span_count + excluded.span_count,
    error_count      = traces.error_count + excluded.error_count,
    has_root         = traces.has_root OR excluded.has_root,
    root_span_id     = coalesce(traces.root_span_id, excluded.root_span_id),
    root_name        = coalesce(traces.root_name, excluded.root_name),
    start_time       = least(traces.start_time, excluded.start_time),
    end_time         = greatest(traces.end_time, excluded.end_time),
    service_name     = coalesce(traces.service_name, excluded.service_name),
    case_id          = coalesce(traces.case_id, excluded.case_id),
    run_id           = coalesce(traces.run_id, excluded.run_id),
    session_id       = coalesce(traces.session_id, excluded.session_id),
    user_id          = coalesce(traces.user_id, excluded.user_id)
