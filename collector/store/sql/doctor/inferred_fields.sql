-- name: inferred_fields
-- description: Per span name, field and source, how many steps of the most recent $traces settled traces
--   had the field filled by the structural layer, a mapping or a log record (a source naming a rule
--   and a key: steps.provenance), at most $rows rows.
-- params: $service VARCHAR, $since TIMESTAMP, $traces BIGINT, $rows BIGINT
-- returns: name, field, source, steps
WITH t AS (
    SELECT trace_id FROM traces
    WHERE settled_at IS NOT NULL
      AND ($service IS NULL OR service_name = $service)
      AND ($since IS NULL OR start_time >= $since)
    ORDER BY start_time DESC LIMIT $traces
), p AS (
    SELECT s.name, unnest(map_entries(
        CAST(json_transform(s.provenance, '"MAP(VARCHAR, VARCHAR)"') AS MAP(VARCHAR, VARCHAR))
    )) AS e
    FROM steps s JOIN t USING (trace_id)
    WHERE s.provenance IS NOT NULL
)
SELECT coalesce(name, '') AS name, e.key AS field, e.value AS source, count(*) AS steps
FROM p WHERE regexp_matches(e.value, '[:@]')
GROUP BY ALL ORDER BY name, field, steps DESC, source LIMIT $rows
