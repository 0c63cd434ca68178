-- name: empty_retrieval
-- description: The traces registered as _s_ids with a retrieval step and no candidate or reranker-input
--   document, where a retrieval step recorded its output (an empty list, ``[]``): a retrieval that
--   recorded neither documents nor an output value is unknown, not empty. {steps_window} and {docs_window} are the received_at windows of those traces (every
--   step and document was received in them: the scans skip the rest, migration 005), or nothing.
-- params: $lo TIMESTAMP = NULL, $hi TIMESTAMP = NULL
-- returns: trace_id
SELECT s.trace_id
FROM steps s
WHERE s.trace_id IN (SELECT trace_id FROM _s_ids) AND s.step_type = 'retrieval'{steps_window}
GROUP BY s.trace_id
HAVING bool_or(coalesce(s.output_text, '') <> '' OR coalesce(s.tool_result, '') <> '')
   AND NOT EXISTS (SELECT 1 FROM step_documents d WHERE d.trace_id = s.trace_id
                   AND d.stage IN ('candidate', 'rerank_input'){docs_window})
