-- name: empty_retrieval
-- description: The traces registered as _s_ids with a retrieval step and no candidate or reranker-input
--   document, where a retrieval step recorded its output (an empty list, ``[]``): a retrieval that
--   recorded neither documents nor an output value is unknown, not empty. $lo, $hi:
--   the received_at range of those traces, NULL for none (every step and document was received in
--   it: the scans skip the rest, migration 005).
-- params: $lo TIMESTAMP = NULL, $hi TIMESTAMP = NULL
-- returns: trace_id
SELECT s.trace_id
FROM steps s
WHERE s.trace_id IN (SELECT trace_id FROM _s_ids) AND s.step_type = 'retrieval'
  AND ($lo IS NULL OR s.received_at BETWEEN $lo AND $hi)
GROUP BY s.trace_id
HAVING bool_or(coalesce(s.output_text, '') <> '' OR coalesce(s.tool_result, '') <> '')
   AND NOT EXISTS (SELECT 1 FROM step_documents d WHERE d.trace_id = s.trace_id
                   AND d.stage IN ('candidate', 'rerank_input')
                   AND ($lo IS NULL OR d.received_at BETWEEN $lo AND $hi))
