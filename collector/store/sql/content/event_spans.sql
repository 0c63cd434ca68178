-- name: event_spans
-- description: The attributes, events and service of the spans those records belong to (_fill_spans:
--   trace_id, span_id), read again with the records' content (their name and scope for the
--   server's [[conventions.mapping]] entries).
-- params: none
-- returns: trace_id, span_id, attributes, events, service_name, name, scope_name
SELECT s.trace_id, s.span_id, s.attributes, s.events, s.service_name, s.name, s.scope_name FROM spans s JOIN _fill_spans f ON s.trace_id = f.trace_id AND s.span_id = f.span_id
