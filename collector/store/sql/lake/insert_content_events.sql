-- name: insert_content_events
-- description: The GenAI content events among a batch's new log records (_in_logs) into
--   trace_content_events: traces.content_events counts them and they move its last_received_at, so
--   a trace settled before its content arrived settles again (the file's ingest updates traces).
--   {events} is the quoted list of event names (genai_events.CONTENT_EVENTS).
-- params: none
-- returns: nothing
INSERT INTO trace_content_events (trace_id, record_id, received_at)
SELECT DISTINCT ON (record_id) trace_id, record_id, received_at FROM _in_logs
WHERE trace_id IS NOT NULL AND trace_id <> '' AND event_name IN ({events})
