-- name: item_feedback
-- description: A triage screen's feedback: the trace's trace_feedback row, if it was given any.
-- params: $t VARCHAR
-- returns: every column of trace_feedback
SELECT * FROM trace_feedback WHERE trace_id = $t
