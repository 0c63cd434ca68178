-- name: assembly_docs
-- description: The documents assembly reads for the traces in _ids: explicit context documents, and
--   the ranked stages' documents with content, the first of each text only (in assembly's stage
--   order, {rank} over the stages {ranked}, from assemble.STAGE_PRIORITY). A document sent without
--   text takes its text from the knowledge-base registry by its id. {window} as in trace_steps.
-- params: $lo TIMESTAMP = NULL, $hi TIMESTAMP = NULL
-- returns: trace_id, span_id, stage, position, doc_id, chunk_id, content, score, metadata, source
WITH d AS (SELECT d.trace_id, d.span_id, d.stage, d.position, d.doc_id, d.chunk_id, coalesce(nullif(d.content, ''), k.content) AS content, d.score, d.metadata, d.source FROM step_documents d LEFT JOIN kb_documents k ON (d.content IS NULL OR d.content = '') AND k.doc_id = coalesce(d.doc_id, d.chunk_id) WHERE d.trace_id IN (SELECT trace_id FROM _ids) AND d.source <> 'derived'{window}) SELECT trace_id, span_id, stage, position, doc_id, chunk_id, content, score, metadata, source FROM d WHERE ((stage = 'context' AND source = 'span') OR (stage IN ({ranked}) AND content <> '')) QUALIFY stage = 'context' OR row_number() OVER (PARTITION BY trace_id, stage = 'context', content ORDER BY {rank}, span_id, stage, position) = 1 ORDER BY trace_id, span_id, stage, position
