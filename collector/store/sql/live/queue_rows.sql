-- name: queue_rows
-- description: The triage queue's rows the live page read once (registered as _triage_queue): the body
--   triage_backlog counts by service and reason, so the page's backlog counts the queue it shows.
-- grain: one row per live trace with a reason to look
-- params: none
-- returns: trace_id, service_name, start_time, reasons, root_cause, question, thumbs_down
SELECT * FROM _triage_queue
