-- name: root_attributes
-- description: The root span's attributes and resource attributes of the traces registered as _s_ids.
-- params: none
-- returns: trace_id, attributes, resource_attributes
SELECT t.trace_id, s.attributes, s.resource_attributes
FROM traces t JOIN spans s ON s.trace_id = t.trace_id AND s.span_id = t.root_span_id
WHERE t.trace_id IN (SELECT trace_id FROM _s_ids)
