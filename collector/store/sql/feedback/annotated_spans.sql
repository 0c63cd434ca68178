-- name: annotated_spans
-- description: The spans of the traces registered as _fb_ids that carry feedback: marked at ingest
--   (spans.feedback), or stored before spans were marked (NULL) with one of the markers in their JSON;
--   $lo, $hi: the received_at range of those traces, NULL for none (every row of a trace was received in it:
--   the scan skips the rest of the table, migration 005).
-- params: $keys VARCHAR[], $event VARCHAR, $lo TIMESTAMP = NULL, $hi TIMESTAMP = NULL
-- returns: trace_id, span_id, parent_span_id, attributes, events, links
SELECT trace_id, span_id, parent_span_id, attributes, events, links
FROM spans
WHERE (feedback OR (feedback IS NULL AND (
        len(list_filter($keys, lambda k: contains(CAST(attributes AS VARCHAR), k))) > 0
        OR contains(CAST(events AS VARCHAR), $event))))
  AND trace_id IN (SELECT trace_id FROM _fb_ids)
  AND ($lo IS NULL OR received_at BETWEEN $lo AND $hi)
