-- name: triage_queue
-- description: The live page's triage queue: the bundled triage query ({body}, queries/triage.sql,
--   run with its own parameters) keeping only the columns the page shows (the answers and evidence
--   of up to its $limit rows are not fetched), in the query's own order.
-- grain: one row per live trace with a reason to look
-- params: none
-- returns: trace_id, service_name, start_time, reasons, root_cause, question, thumbs_down
SELECT trace_id, service_name, start_time, reasons, root_cause, question, thumbs_down
FROM (
{body}
) q
