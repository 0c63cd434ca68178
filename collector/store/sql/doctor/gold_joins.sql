-- name: gold_joins
-- description: Per service, of the settled traces in a window (the most recent $traces at most), how
--   many joined a gold case (by case id, or by normalized query text), how many recorded no question,
--   and how many recorded one that no gold case asks; only when there are gold cases.
-- params: $service VARCHAR, $since TIMESTAMP, $traces BIGINT
-- returns: service_name, traces, joined, no_question, unmatched
WITH t AS (
    SELECT trace_id, service_name, case_id, query_norm FROM traces
    WHERE settled_at IS NOT NULL
      AND ($service IS NULL OR service_name = $service)
      AND ($since IS NULL OR start_time >= $since)
      AND EXISTS (SELECT 1 FROM gold_cases)
    ORDER BY start_time DESC LIMIT $traces
), j AS (
    SELECT t.*,
        t.case_id IS NOT NULL OR EXISTS (SELECT 1 FROM gold_cases g WHERE g.query_norm = t.query_norm) AS joined
    FROM t
)
SELECT coalesce(service_name, 'unknown') AS service_name, count(*) AS traces,
    count(*) FILTER (WHERE joined) AS joined,
    count(*) FILTER (WHERE NOT joined AND query_norm IS NULL) AS no_question,
    count(*) FILTER (WHERE NOT joined AND query_norm IS NOT NULL) AS unmatched
FROM j GROUP BY ALL ORDER BY traces DESC, service_name
