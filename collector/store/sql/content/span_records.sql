-- name: span_records
-- description: The log records of the traces $t that name their span and are no GenAI content event
--   (those are event_records), by span and time, with the service that sent each: the structural
--   layer reads what they hold as payloads of their span (collector.normalize.events), where the
--   span's reader and attributes left a field empty. $events are the content event names; $lo, $hi
--   the traces' received range widened by the lead a record may have on its spans (NULL: no range).
-- params: $t VARCHAR[], $events VARCHAR[], $lo TIMESTAMP = NULL, $hi TIMESTAMP = NULL
-- returns: trace_id, span_id, event_name, attributes, body, time_unix_nano, service_name
SELECT trace_id, span_id, event_name, attributes, body, time_unix_nano, service_name FROM log_records WHERE trace_id = ANY($t) AND span_id IS NOT NULL AND span_id <> '' AND (event_name IS NULL OR NOT (event_name = ANY($events))) AND ($lo IS NULL OR received_at BETWEEN $lo AND $hi) ORDER BY trace_id, span_id, time_unix_nano
