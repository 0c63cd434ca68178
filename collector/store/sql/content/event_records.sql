-- name: event_records
-- description: The GenAI content events sent as log records for the traces in _fill_ids, by span and
--   time, with the service that sent each (a record joins its span only from the span's own service
--   or a trusted one). $events are the event names (genai_events.CONTENT_EVENTS);
--   $lo, $hi the traces' received range, widened by the lead a record may have on its spans (NULL:
--   no range).
-- params: $events VARCHAR[], $lo TIMESTAMP = NULL, $hi TIMESTAMP = NULL
-- returns: trace_id, span_id, event_name, attributes, body, time_unix_nano, service_name
SELECT trace_id, span_id, event_name, attributes, body, time_unix_nano, service_name FROM log_records WHERE trace_id IN (SELECT trace_id FROM _fill_ids) AND span_id IS NOT NULL AND event_name = ANY($events) AND ($lo IS NULL OR received_at BETWEEN $lo AND $hi) ORDER BY trace_id, span_id, time_unix_nano
