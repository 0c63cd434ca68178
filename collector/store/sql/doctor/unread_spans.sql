-- name: unread_spans
-- description: The spans of the most recent $traces traces that hold spans no convention reader could read
--   (convention unknown), with the spans the structural layer read beside them: what ragfault doctor
--   suggests mappings from.
-- params: $service VARCHAR, $since TIMESTAMP, $traces BIGINT
-- returns: trace_id, name, scope_name, attributes, convention
WITH t AS (
    SELECT trace_id, max(start_time) AS latest FROM spans
    WHERE convention = 'unknown'
      AND ($service IS NULL OR service_name = $service)
      AND ($since IS NULL OR start_time >= $since)
    GROUP BY trace_id ORDER BY latest DESC LIMIT $traces
)
SELECT s.trace_id, s.name, s.scope_name, s.attributes, s.convention
FROM spans s JOIN t USING (trace_id)
WHERE s.convention IN ('unknown', 'structural')
ORDER BY s.trace_id, s.start_time
