-- name: gold_join_misses
-- description: Settled traces in a window (the most recent $traces at most) whose question matches no
--   gold case's, with the gold case whose question the trace's holds inside a longer text (a framework
--   that records its whole task prompt as the question), where one does; at most $rows, those with such
--   a case first.
-- params: $service VARCHAR, $since TIMESTAMP, $traces BIGINT, $rows BIGINT
-- returns: trace_id, service_name, query_text, inside_case, inside_query
WITH t AS (
    SELECT trace_id, service_name, query_text, query_norm FROM traces
    WHERE settled_at IS NOT NULL AND case_id IS NULL AND query_norm IS NOT NULL
      AND ($service IS NULL OR service_name = $service)
      AND ($since IS NULL OR start_time >= $since)
      AND NOT EXISTS (SELECT 1 FROM gold_cases g WHERE g.query_norm = traces.query_norm)
    ORDER BY start_time DESC LIMIT $traces
)
SELECT t.trace_id, coalesce(t.service_name, 'unknown') AS service_name, t.query_text,
    arg_max(g.case_id, length(g.query_norm)) AS inside_case, arg_max(g.query, length(g.query_norm)) AS inside_query
FROM t LEFT JOIN gold_cases g
    ON length(g.query_norm) >= 8 AND contains(t.query_norm, g.query_norm)
GROUP BY ALL
ORDER BY inside_case IS NULL, t.trace_id
LIMIT $rows
