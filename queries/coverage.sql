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
--   traces with an LLM step). Each trace's fields are the trace_coverage view's; the registry's
--   documents are looked up here, so a registry loaded later counts at once.
-- grain: one row per (service_name, convention, field)
-- params: $service VARCHAR = NULL, $since TIMESTAMP = NULL
-- returns: service_name, convention, traces, field, position (the field's place in the list above),
--   carried, denominator, share
WITH f AS NOT MATERIALIZED (
    -- each settled trace's fields (the trace_coverage view) in the window; each use reads only the
    -- columns it needs (made once, every column of every trace would be copied)
    SELECT *
    FROM trace_coverage
    WHERE ($service IS NULL OR service_name = $service)
      AND ($since IS NULL OR start_time >= $since)
),
-- the registry's documents that have text
kb_text AS (
    SELECT doc_id FROM kb_documents WHERE coalesce(content, '') <> ''
),
-- traces whose every candidate without text of its own has the registry's (by doc id or chunk id)
registry_texted AS (
    SELECT trace_id
    FROM (SELECT trace_id, unnest(untexted_candidates) AS u FROM f WHERE len(untexted_candidates) > 0)
    GROUP BY trace_id
    HAVING bool_and(coalesce(u.doc_id IN (SELECT doc_id FROM kb_text), false)
                    OR coalesce(u.chunk_id IN (SELECT doc_id FROM kb_text), false))
),
-- traces with a [doc-id] marker naming a document of the registry
registry_cited AS (
    SELECT DISTINCT trace_id
    FROM (SELECT trace_id, unnest(registry_markers) AS marker FROM f WHERE len(registry_markers) > 0)
    WHERE marker IN (SELECT doc_id FROM kb_documents)
),
per_trace AS (
    SELECT
        f.service_name,
        f.convention,
        f.query,
        f.case_id,
        f.trace_scope,
        f.trace_scope OR f.case_scope AS user_scope,
        f.case_scope,
        f.retrieval_step AND f.candidates = 0 AS empty_retrieval,
        f.candidates > 0 OR f.retrieval_step AS retrieval,
        f.candidates > 0 AS has_candidates,
        f.candidate_ids,
        f.candidates > 0 AND (len(f.untexted_candidates) = 0 OR rt.trace_id IS NOT NULL) AS candidate_text,
        f.rerank_step,
        f.rerank_input,
        f.rerank_output,
        f.llm_step,
        f.answer_llm_input,
        f.context,
        f.answer,
        f.citations OR rc.trace_id IS NOT NULL AS citations,
        f.model,
        f.tokens
    FROM f
    LEFT JOIN registry_texted rt ON rt.trace_id = f.trace_id
    LEFT JOIN registry_cited rc ON rc.trace_id = f.trace_id
),
g AS (
    SELECT
        service_name,
        convention,
        count(*) AS traces,
        count_if(has_candidates) AS with_candidates,
        count_if(rerank_step AND NOT empty_retrieval) AS with_rerank,
        -- the service uses scopes: some trace or gold case has them, or the registry has access lists
        bool_or(trace_scope OR case_scope) OR (SELECT count(*) > 0 FROM kb_documents WHERE acl IS NOT NULL)
            AS uses_scopes,
        count_if(llm_step) AS with_llm,
        count_if(query) AS query,
        count_if(case_id) AS case_id,
        count_if(user_scope) AS user_scope,
        count_if(retrieval) AS retrieval,
        count_if(candidate_ids) AS candidate_ids,
        count_if(candidate_text) AS candidate_text,
        count_if(rerank_step AND NOT empty_retrieval AND rerank_input) AS rerank_input,
        count_if(rerank_step AND NOT empty_retrieval AND rerank_output) AS rerank_output,
        count_if(llm_step) AS llm_step,
        count_if(llm_step AND answer_llm_input) AS answer_llm_input,
        count_if(context) AS context,
        count_if(answer) AS answer,
        count_if(citations) AS citations,
        count_if(llm_step AND model) AS model,
        count_if(llm_step AND tokens) AS tokens
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
