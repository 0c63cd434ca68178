-- name: trace_coverage
-- view: trace_coverage
-- description: What each settled trace carries that attribution needs, from its own rows (its
--   steps, documents and verdicts' gold cases): what coverage counts per service and convention.
--   convention: the conventions its steps were read with, joined by '+' ('unknown' when none); query,
--   case_id, answer: it recorded one; trace_scope: scopes of its own; case_scope: the gold case its
--   verdicts name has scopes; retrieval_step, rerank_step, llm_step: it has such a step; candidates:
--   its candidate documents (0: none); candidate_ids: every candidate has an id; texted_candidates:
--   those with text of their own; untexted_candidates: the distinct ids (doc_id, chunk_id) of the
--   others, which only the knowledge-base registry can give text (coverage looks them up; a candidate
--   with neither id is listed with both NULL, which nothing resolves); rerank_input and rerank_output:
--   documents went into and came out of a rerank step; answer_llm_input: the answering LLM call
--   recorded its input; context: what the model saw, as the evaluators read it (context documents, or
--   the answering call's input); citations: the `ragfault.answer.citations` attribute, or a `[doc-id]`
--   marker in the answer naming a document of the trace; registry_markers: when it has no citation
--   so far, the other markers, which cite when the registry knows them (coverage looks them up);
--   model and tokens: an LLM step recorded them; start_time and service_name ('unknown' when none):
--   the trace's, for a window's filter.
-- grain: one row per settled trace
-- params: none
-- returns: trace_id, start_time, service_name, convention, query, case_id, trace_scope, case_scope,
--   retrieval_step, rerank_step, llm_step, candidates, candidate_ids, texted_candidates,
--   untexted_candidates, rerank_input, rerank_output, answer_llm_input, context, answer, citations,
--   registry_markers, model, tokens
WITH t AS (
    SELECT trace_id, start_time, coalesce(service_name, 'unknown') AS service_name, case_id, user_scope,
           query_text, answer_text, answer_span_id
    FROM traces
    WHERE settled_at IS NOT NULL
),
-- the gold cases the trace's verdicts name (by case id or by query text), and whether one has scopes
gc AS (
    SELECT e.trace_id, bool_or(len(coalesce(g.user_scope, [])) > 0) AS case_scope
    FROM (SELECT DISTINCT trace_id, case_id FROM evaluations WHERE case_id IS NOT NULL) e
    JOIN gold_cases g ON g.case_id = e.case_id
    GROUP BY e.trace_id
),
-- the answering call's step: its input, and its output when the trace recorded no answer text
a AS (
    SELECT st.trace_id, coalesce(st.input_text, '') <> '' AS llm_input, st.output_text
    FROM steps st
    JOIN t ON st.trace_id = t.trace_id AND st.span_id = t.answer_span_id
),
-- [doc-id] markers in each answer (the answer text, else the answering call's output), the way the
-- citations evaluator reads them: brackets holding ids separated by , or ;
mk AS (
    SELECT DISTINCT trace_id, trim(unnest(regexp_split_to_array(inner_text, '[,;，；]'))) AS marker
    FROM (
        SELECT t.trace_id,
               unnest(regexp_extract_all(
                   coalesce(nullif(trim(t.answer_text), ''), a.output_text, ''),
                   '[\[【]\s*([^\[\]【】\s,;，；]{1,120}(?:\s*[,;，；]\s*[^\[\]【】\s,;，；]{1,120})*)\s*[\]】]',
                   1)) AS inner_text
        FROM t
        LEFT JOIN a ON a.trace_id = t.trace_id
        WHERE strpos(coalesce(t.answer_text, '') || coalesce(a.output_text, ''), '[') > 0
           OR strpos(coalesce(t.answer_text, '') || coalesce(a.output_text, ''), '【') > 0
    )
),
-- ... and whether each names a document of the trace
named AS (
    SELECT mk.trace_id, mk.marker,
           EXISTS (
               SELECT 1 FROM step_documents sd
               WHERE sd.trace_id = mk.trace_id
                 AND mk.marker IN (sd.doc_id, sd.chunk_id,
                                   json_extract_string(sd.metadata, '$.doc_id'),
                                   json_extract_string(sd.metadata, '$.document_id'),
                                   json_extract_string(sd.metadata, '$.ref_doc_id'),
                                   json_extract_string(sd.metadata, '$.source'),
                                   json_extract_string(sd.metadata, '$.file_name'),
                                   json_extract_string(sd.metadata, '$.file_path'))) AS own
    FROM mk
    WHERE mk.marker <> ''
),
cited AS (
    SELECT trace_id, bool_or(own) AS own, list(marker ORDER BY marker) FILTER (WHERE NOT own) AS others
    FROM named
    GROUP BY trace_id
),
s AS (
    SELECT
        st.trace_id,
        coalesce(string_agg(DISTINCT st.convention, '+' ORDER BY st.convention) FILTER (WHERE st.convention <> 'unknown'),
                 'unknown') AS convention,
        bool_or(st.step_type = 'retrieval') AS retrieval_step,
        bool_or(st.step_type = 'rerank') AS rerank_step,
        bool_or(st.step_type = 'llm') AS llm_step,
        bool_or(st.step_type = 'llm' AND coalesce(st.model, '') <> '') AS model,
        bool_or(st.step_type = 'llm' AND coalesce(st.total_tokens, st.input_tokens, st.output_tokens) IS NOT NULL) AS tokens,
        bool_or(len(coalesce(st.citations, [])) > 0) AS citations
    FROM steps st
    JOIN t ON st.trace_id = t.trace_id
    GROUP BY st.trace_id
),
d AS (
    SELECT
        sd.trace_id,
        count(*) FILTER (WHERE sd.stage IN ('candidate', 'opened')) AS candidates,
        count(*) FILTER (WHERE sd.stage IN ('candidate', 'opened') AND (sd.doc_id IS NOT NULL OR sd.chunk_id IS NOT NULL)) AS with_ids,
        count(*) FILTER (WHERE sd.stage IN ('candidate', 'opened') AND coalesce(sd.content, '') <> '') AS texted,
        list(DISTINCT {'doc_id': sd.doc_id, 'chunk_id': sd.chunk_id} ORDER BY {'doc_id': sd.doc_id, 'chunk_id': sd.chunk_id})
            FILTER (WHERE sd.stage IN ('candidate', 'opened') AND coalesce(sd.content, '') = '') AS untexted,
        count(*) FILTER (WHERE sd.stage = 'rerank_input') AS rerank_input,
        count(*) FILTER (WHERE sd.stage = 'reranked') AS reranked,
        count(*) FILTER (WHERE sd.stage = 'context') AS context
    FROM step_documents sd
    JOIN t ON sd.trace_id = t.trace_id
    GROUP BY sd.trace_id
)
SELECT
    t.trace_id,
    t.start_time,
    t.service_name,
    coalesce(s.convention, 'unknown') AS convention,
    coalesce(t.query_text, '') <> '' AS query,
    t.case_id IS NOT NULL AS case_id,
    len(coalesce(t.user_scope, [])) > 0 AS trace_scope,
    coalesce(gc.case_scope, false) AS case_scope,
    coalesce(s.retrieval_step, false) AS retrieval_step,
    coalesce(s.rerank_step, false) AS rerank_step,
    coalesce(s.llm_step, false) AS llm_step,
    coalesce(d.candidates, 0) AS candidates,
    coalesce(d.candidates, 0) > 0 AND d.with_ids = d.candidates AS candidate_ids,
    coalesce(d.texted, 0) AS texted_candidates,
    coalesce(d.untexted, []) AS untexted_candidates,
    coalesce(d.rerank_input, 0) > 0 AS rerank_input,
    coalesce(d.reranked, 0) > 0 AS rerank_output,
    coalesce(a.llm_input, false) AS answer_llm_input,
    coalesce(d.context, 0) > 0 OR coalesce(a.llm_input, false) AS context,
    coalesce(t.answer_text, '') <> '' AS answer,
    coalesce(s.citations, false) OR coalesce(cited.own, false) AS citations,
    CASE WHEN coalesce(s.citations, false) OR coalesce(cited.own, false) THEN []
         ELSE coalesce(cited.others, []) END AS registry_markers,
    coalesce(s.model, false) AS model,
    coalesce(s.tokens, false) AS tokens
FROM t
LEFT JOIN s ON s.trace_id = t.trace_id
LEFT JOIN a ON a.trace_id = t.trace_id
LEFT JOIN d ON d.trace_id = t.trace_id
LEFT JOIN gc ON gc.trace_id = t.trace_id
LEFT JOIN cited ON cited.trace_id = t.trace_id
