-- name: insert_content_events
-- description: The GenAI content events among a batch's new log records (_in_logs) into
--   trace_content_events: traces.content_events counts them and they move its last_received_at, so
--   a trace settled before its content arrived settles again (the file's ingest updates traces).
--   {events} is the quoted list of event names (genai_events.CONTENT_EVENTS). Only the records in
--   _admitted count (``content.admitted``): one from another service than its settled trace's span
--   is stored in log_records and re-opens nothing.
-- params: none
-- returns: nothing
INSERT INTO trace_content_events (trace_id, record_id, received_at)
SELECT DISTINCT ON (record_id) trace_id, record_id, received_at FROM _in_logs
WHERE trace_id IS NOT NULL AND trace_id <> '' AND event_name IN ({events})
  AND record_id IN (SELECT record_id FROM _admitted)
