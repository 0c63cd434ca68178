-- The former formulation of queries/coverage.sql (every step and document read on each call), kept as
-- the definition the bundled query must equal (bench/same_results.py; tests/queries/test_same_results.py).
-- Change both together.
-- name: coverage
-- description: What the traces carry that attribution needs, per service and detected convention
--   (`ragfault doctor`, GET /api/v1/coverage). For each field: the settled traces that carry it,
--   the traces it is counted over (denominator) and the share (NULL when the denominator is 0).
--   A trace's convention is the conventions its steps were read with (steps.convention), joined by
--   '+' ('unknown' when none). Fields, in order: query, case_id, user_scope (the trace's scopes or
--   its gold case's, as the permission evaluator reads them; counted only where the service or its
--   gold cases use scopes, or the registry has access lists), retrieval (candidate documents or a
--   retrieval step), candidate_ids and candidate_text (every candidate has an id; has text, its own
--   or the registry's; over traces with candidates), rerank_input and rerank_output (over traces
--   with a rerank step whose retrieval returned something), llm_step, answer_llm_input (the
--   answering LLM call's input; over traces with an LLM step), context (what the model saw, as the
--   evaluators read it: context documents, explicit or derived, or the answering call's input; a
--   retrieval that returned nothing leaves the context empty, not unknown), answer, citations (the
--   `ragfault.answer.citations` attribute, or a `[doc-id]` marker in the answer naming a document
--   of the trace or the registry, as the citations evaluator reads them), model and tokens (over
--   traces with an LLM step).
-- grain: one row per (service_name, convention, field)
-- params: $service VARCHAR = NULL, $since TIMESTAMP = NULL
-- returns: service_name, convention, traces, field, position (the field's place in the list above),
--   carried, denominator, share
WITH t AS (
    SELECT trace_id, coalesce(service_name, 'unknown') AS service_name, case_id, user_scope, query_text,
           answer_text, answer_span_id
    FROM traces
    WHERE settled_at IS NOT NULL
      AND ($service IS NULL OR service_name = $service)
      AND ($since IS NULL OR start_time >= $since)
),
-- the gold case each trace was evaluated against (by case id or by query text) and its scopes
gc AS (
    SELECT e.trace_id, bool_or(len(coalesce(g.user_scope, [])) > 0) AS case_scope
    FROM (SELECT DISTINCT trace_id, case_id FROM evaluations
          WHERE case_id IS NOT NULL AND trace_id IN (SELECT trace_id FROM t)) e
    JOIN gold_cases g ON g.case_id = e.case_id
    GROUP BY e.trace_id
),
-- [doc-id] markers in each answer (the answer text, else the answering call's output), the way
-- the citations evaluator reads them: brackets holding ids separated by , or ;
mk AS (
    SELECT trace_id, trim(unnest(regexp_split_to_array(inner_text, '[,;，；]'))) AS marker
    FROM (
        SELECT t.trace_id,
               unnest(regexp_extract_all(
                   coalesce(nullif(trim(t.answer_text), ''), st.output_text, ''),
                   '[\[【]\s*([^\[\]【】\s,;，；]{1,120}(?:\s*[,;，；]\s*[^\[\]【】\s,;，；]{1,120})*)\s*[\]】]',
                   1)) AS inner_text
        FROM t
        LEFT JOIN steps st ON st.trace_id = t.trace_id AND st.span_id = t.answer_span_id
        WHERE strpos(coalesce(t.answer_text, '') || coalesce(st.output_text, ''), '[') > 0
           OR strpos(coalesce(t.answer_text, '') || coalesce(st.output_text, ''), '【') > 0
    )
),
-- ... that name a document the trace or the registry knows
cited AS (
    SELECT DISTINCT mk.trace_id
    FROM mk
    WHERE mk.marker <> ''
      AND (mk.marker IN (SELECT doc_id FROM kb_documents)
           OR EXISTS (
               SELECT 1 FROM step_documents sd
               WHERE sd.trace_id = mk.trace_id
                 AND mk.marker IN (sd.doc_id, sd.chunk_id,
                                   json_extract_string(sd.metadata, '$.doc_id'),
                                   json_extract_string(sd.metadata, '$.document_id'),
                                   json_extract_string(sd.metadata, '$.ref_doc_id'),
                                   json_extract_string(sd.metadata, '$.source'),
                                   json_extract_string(sd.metadata, '$.file_name'),
                                   json_extract_string(sd.metadata, '$.file_path'))))
),
s AS (
    SELECT
        trace_id,
        coalesce(string_agg(DISTINCT convention, '+' ORDER BY convention) FILTER (WHERE convention <> 'unknown'),
                 'unknown') AS convention,
        bool_or(step_type = 'retrieval') AS retrieval_step,
        bool_or(step_type = 'rerank') AS rerank_step,
        bool_or(step_type = 'llm') AS llm_step,
        bool_or(step_type = 'llm' AND coalesce(model, '') <> '') AS model,
        bool_or(step_type = 'llm' AND coalesce(total_tokens, input_tokens, output_tokens) IS NOT NULL) AS tokens,
        bool_or(len(coalesce(citations, [])) > 0) AS citations
    FROM steps
    WHERE trace_id IN (SELECT trace_id FROM t)
    GROUP BY trace_id
),
a AS (
    SELECT st.trace_id, coalesce(st.input_text, '') <> '' AS llm_input
    FROM steps st
    JOIN t ON st.trace_id = t.trace_id AND st.span_id = t.answer_span_id
),
d AS (
    SELECT
        trace_id,
        count(*) FILTER (WHERE stage IN ('candidate', 'opened')) AS candidates,
        count(*) FILTER (WHERE stage IN ('candidate', 'opened') AND (doc_id IS NOT NULL OR chunk_id IS NOT NULL)) AS with_ids,
        count(*) FILTER (WHERE stage IN ('candidate', 'opened') AND (coalesce(content, '') <> ''
                         OR doc_id IN (SELECT doc_id FROM kb_documents WHERE coalesce(content, '') <> '')
                         OR chunk_id IN (SELECT doc_id FROM kb_documents WHERE coalesce(content, '') <> ''))) AS with_text,
        count(*) FILTER (WHERE stage = 'rerank_input') AS rerank_input,
        count(*) FILTER (WHERE stage = 'reranked') AS reranked,
        count(*) FILTER (WHERE stage = 'context') AS context
    FROM step_documents
    WHERE trace_id IN (SELECT trace_id FROM t)
    GROUP BY trace_id
),
per_trace AS (
    SELECT
        t.service_name,
        coalesce(s.convention, 'unknown') AS convention,
        coalesce(t.query_text, '') <> '' AS query,
        t.case_id IS NOT NULL AS case_id,
        len(coalesce(t.user_scope, [])) > 0 AS trace_scope,
        len(coalesce(t.user_scope, [])) > 0 OR coalesce(gc.case_scope, false) AS user_scope,
        coalesce(gc.case_scope, false) AS case_scope,
        coalesce(s.retrieval_step, false) AND coalesce(d.candidates, 0) = 0 AS empty_retrieval,
        coalesce(d.candidates, 0) > 0 OR coalesce(s.retrieval_step, false) AS retrieval,
        coalesce(d.candidates, 0) > 0 AS has_candidates,
        coalesce(d.candidates, 0) > 0 AND d.with_ids = d.candidates AS candidate_ids,
        coalesce(d.candidates, 0) > 0 AND d.with_text = d.candidates AS candidate_text,
        coalesce(s.rerank_step, false) AS rerank_step,
        coalesce(d.rerank_input, 0) > 0 AS rerank_input,
        coalesce(d.reranked, 0) > 0 AS rerank_output,
        coalesce(s.llm_step, false) AS llm_step,
        coalesce(a.llm_input, false) AS answer_llm_input,
        coalesce(d.context, 0) > 0 OR coalesce(a.llm_input, false) AS context,
        coalesce(t.answer_text, '') <> '' AS answer,
        coalesce(s.citations, false) OR cited.trace_id IS NOT NULL AS citations,
        coalesce(s.model, false) AS model,
        coalesce(s.tokens, false) AS tokens
    FROM t
    LEFT JOIN s ON s.trace_id = t.trace_id
    LEFT JOIN a ON a.trace_id = t.trace_id
    LEFT JOIN d ON d.trace_id = t.trace_id
    LEFT JOIN gc ON gc.trace_id = t.trace_id
    LEFT JOIN cited ON cited.trace_id = t.trace_id
),
g AS (
    SELECT
        service_name,
        convention,
        count(*) AS traces,
        count(*) FILTER (WHERE has_candidates) AS with_candidates,
        count(*) FILTER (WHERE rerank_step AND NOT empty_retrieval) AS with_rerank,
        -- the service uses scopes: some trace or gold case has them, or the registry has access lists
        bool_or(trace_scope OR case_scope) OR (SELECT count(*) > 0 FROM kb_documents WHERE acl IS NOT NULL)
            AS uses_scopes,
        count(*) FILTER (WHERE llm_step) AS with_llm,
        count(*) FILTER (WHERE query) AS query,
        count(*) FILTER (WHERE case_id) AS case_id,
        count(*) FILTER (WHERE user_scope) AS user_scope,
        count(*) FILTER (WHERE retrieval) AS retrieval,
        count(*) FILTER (WHERE candidate_ids) AS candidate_ids,
        count(*) FILTER (WHERE candidate_text) AS candidate_text,
        count(*) FILTER (WHERE rerank_step AND NOT empty_retrieval AND rerank_input) AS rerank_input,
        count(*) FILTER (WHERE rerank_step AND NOT empty_retrieval AND rerank_output) AS rerank_output,
        count(*) FILTER (WHERE llm_step) AS llm_step,
        count(*) FILTER (WHERE llm_step AND answer_llm_input) AS answer_llm_input,
        count(*) FILTER (WHERE context) AS context,
        count(*) FILTER (WHERE answer) AS answer,
        count(*) FILTER (WHERE citations) AS citations,
        count(*) FILTER (WHERE llm_step AND model) AS model,
        count(*) FILTER (WHERE llm_step AND tokens) AS tokens
    FROM per_trace
    GROUP BY service_name, convention
),
fields AS (
    SELECT service_name, convention, traces, unnest([
        {'field': 'query', 'position': 1, 'carried': query, 'denominator': traces},
        {'field': 'case_id', 'position': 2, 'carried': case_id, 'denominator': traces},
        {'field': 'user_scope', 'position': 3, 'carried': CASE WHEN uses_scopes THEN user_scope ELSE 0 END,
         'denominator': CASE WHEN uses_scopes THEN traces ELSE 0 END},
        {'field': 'retrieval', 'position': 4, 'carried': retrieval, 'denominator': traces},
        {'field': 'candidate_ids', 'position': 5, 'carried': candidate_ids, 'denominator': with_candidates},
        {'field': 'candidate_text', 'position': 6, 'carried': candidate_text, 'denominator': with_candidates},
        {'field': 'rerank_input', 'position': 7, 'carried': rerank_input, 'denominator': with_rerank},
        {'field': 'rerank_output', 'position': 8, 'carried': rerank_output, 'denominator': with_rerank},
        {'field': 'llm_step', 'position': 9, 'carried': llm_step, 'denominator': traces},
        {'field': 'answer_llm_input', 'position': 10, 'carried': answer_llm_input, 'denominator': with_llm},
        {'field': 'context', 'position': 11, 'carried': context, 'denominator': traces},
        {'field': 'answer', 'position': 12, 'carried': answer, 'denominator': traces},
        {'field': 'citations', 'position': 13, 'carried': citations, 'denominator': traces},
        {'field': 'model', 'position': 14, 'carried': model, 'denominator': with_llm},
        {'field': 'tokens', 'position': 15, 'carried': tokens, 'denominator': with_llm}
    ]) AS f
    FROM g
)
SELECT
    service_name,
    convention,
    traces,
    f.field AS field,
    f.position AS position,
    f.carried AS carried,
    f.denominator AS denominator,
    CASE WHEN f.denominator > 0 THEN f.carried / f.denominator END AS share
FROM fields
ORDER BY service_name, convention, position
