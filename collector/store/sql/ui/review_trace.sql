-- name: review_trace
-- description: The question and answer of a trace under review.
-- params: $t VARCHAR
-- returns: trace_id, query_text, answer_text, case_id, run_id
SELECT trace_id, query_text, answer_text, case_id, run_id FROM traces WHERE trace_id = $t
