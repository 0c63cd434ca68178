-- The one-pass formulation of queries/live_attribution.sql, kept as the definition the bundled view must
-- equal (bench/same_results.py; tests/queries/test_same_results.py). Change both together.
-- name: live_attribution
-- view: live_attribution
-- description: Root cause and every failing layer of each settled, evaluated trace without a gold case
--   (live traffic), from what the trace and the knowledge-base registry prove (docs/architecture.md, Attribution order). The layers, in
--   attribution's order: permission_violation (a candidate outside the caller's scopes, when the trace names
--   them), no_retrieval (retrieval_decision saw no retrieval, not an untraced one, and live_no_retrieval found
--   registry documents covering the question), stale_context, candidate_miss (live_candidate_miss: a registry
--   document no retrieval returned holds the answer's missing fact or the question's open part; a fact of
--   the answer counts only when the answer-support tier, judge or lexical, also finds the answer unsupported),
--   dropped_before_context (live_dropped: a candidate cut before the prompt holds it, and the answer refused
--   or the answer-support tier finds it unsupported), over_refusal
--   (live_over_refusal: a refusal while the context covers the question), unsupported_claims (the judge's
--   verdict when the judge scored the trace, else the lexical checker's), invalid_citation, then
--   insufficient_trace (no layer above failed but the trace lacks fields: missing_fields). The root cause is
--   the first failing layer, else none_seen: without a reference "nothing seen" is all that can be said, never
--   ok. Layers that need a reference (evidence_not_in_kb, not_opened, answered_unanswerable,
--   incomplete_answer) are never claimed. basis: registry when the root cause needed a registry search
--   (no_retrieval, candidate_miss), judge when it is the judge's verdict, else trace.
-- grain: one row per trace_id without a gold case
-- params: none
-- returns: trace_id, service_name, start_time, run_id, root_cause, failing_layers, evidence (JSON object: for
--   each failing layer, the verdict details behind it), basis, missing_fields (VARCHAR[]), query_text, answer_text
WITH live_rows AS (
    SELECT e.*
    FROM evaluations e
    WHERE e.status IN ('ok', 'not_applicable')
      AND NOT EXISTS (SELECT 1 FROM gold_cases g WHERE g.case_id = e.case_id)
),
layer_rows AS (
    SELECT
        trace_id,
        any_value(run_id) AS run_id,
        bool_or(metric = 'permission_violations' AND span_id IS NULL AND passed = false) AS permission_violation,
        bool_or(metric = 'retrieval_decision' AND label LIKE '%×skipped') AS retrieval_skipped,
        bool_or(metric = 'live_no_retrieval' AND passed = false) AS registry_matches,
        bool_or(metric = 'stale_context' AND span_id IS NULL AND passed = false) AS stale_context,
        bool_or(metric = 'live_candidate_miss' AND passed = false AND label <> 'answer_claim') AS miss_by_question,
        bool_or(metric = 'live_candidate_miss' AND passed = false) AS miss_by_any,
        bool_or(metric = 'live_dropped' AND passed = false) AS held_by_cut,
        bool_or(metric = 'refusal' AND value = 1) AS refused,
        bool_or(metric = 'live_over_refusal' AND passed = false) AS over_refusal,
        bool_or(metric = 'judge_answer_support' AND status = 'ok') AS judged,
        bool_or(metric = 'judge_answer_support' AND passed = false) AS judge_unsupported,
        bool_or(metric = 'answer_support' AND passed = false) AS lexical_unsupported,
        bool_or(metric = 'citation_validity' AND passed = false) AS invalid_cited_id,
        bool_or(metric = 'judge_citation_support' AND passed = false) AS judge_invalid_citation,
        bool_or(metric = 'trace_sufficiency' AND passed = false) AS insufficient_trace,
        any_value(details) FILTER (WHERE metric = 'permission_violations' AND span_id IS NULL) AS d_permission,
        any_value(details) FILTER (WHERE metric = 'live_no_retrieval') AS d_no_retrieval,
        any_value(details) FILTER (WHERE metric = 'stale_context' AND span_id IS NULL) AS d_stale,
        any_value(details) FILTER (WHERE metric = 'live_candidate_miss') AS d_miss,
        any_value(details) FILTER (WHERE metric = 'live_dropped') AS d_dropped,
        any_value(details) FILTER (WHERE metric = 'live_over_refusal') AS d_refusal,
        any_value(details) FILTER (WHERE metric = 'judge_answer_support') AS d_judge_support,
        any_value(details) FILTER (WHERE metric = 'answer_support') AS d_support,
        any_value(details) FILTER (WHERE metric = 'citation_validity') AS d_citations,
        any_value(details) FILTER (WHERE metric = 'judge_citation_support') AS d_judge_citations,
        any_value(details) FILTER (WHERE metric = 'trace_sufficiency') AS d_sufficiency
    FROM live_rows
    GROUP BY trace_id
),
layers AS (
    SELECT
        *,
        retrieval_skipped AND registry_matches AS no_retrieval,
        CASE WHEN judged THEN judge_unsupported ELSE lexical_unsupported END AS unsupported_claims,
        invalid_cited_id OR judge_invalid_citation AS invalid_citation
    FROM layer_rows
),
checked AS (
    SELECT
        *,
        miss_by_question OR (miss_by_any AND unsupported_claims) AS candidate_miss,
        held_by_cut AND (unsupported_claims OR refused) AS dropped_before_context
    FROM layers
),
flags AS (
    SELECT
        *,
        list_filter(
            [
                CASE WHEN permission_violation THEN 'permission_violation' END,
                CASE WHEN no_retrieval THEN 'no_retrieval' END,
                CASE WHEN stale_context THEN 'stale_context' END,
                CASE WHEN candidate_miss THEN 'candidate_miss' END,
                CASE WHEN dropped_before_context THEN 'dropped_before_context' END,
                CASE WHEN over_refusal THEN 'over_refusal' END,
                CASE WHEN unsupported_claims THEN 'unsupported_claims' END,
                CASE WHEN invalid_citation THEN 'invalid_citation' END,
                CASE WHEN insufficient_trace THEN 'insufficient_trace' END
            ],
            lambda x: x IS NOT NULL
        ) AS failing_layers
    FROM checked
)
SELECT
    f.trace_id,
    t.service_name,
    t.start_time,
    f.run_id,
    coalesce(f.failing_layers[1], 'none_seen') AS root_cause,
    f.failing_layers,
    json_merge_patch('{}', json_object(
        'permission_violation', CASE WHEN f.permission_violation THEN f.d_permission END,
        'no_retrieval', CASE WHEN f.no_retrieval THEN f.d_no_retrieval END,
        'stale_context', CASE WHEN f.stale_context THEN f.d_stale END,
        'candidate_miss', CASE WHEN f.candidate_miss THEN f.d_miss END,
        'dropped_before_context', CASE WHEN f.dropped_before_context THEN f.d_dropped END,
        'over_refusal', CASE WHEN f.over_refusal THEN f.d_refusal END,
        'unsupported_claims', CASE WHEN f.unsupported_claims THEN coalesce(CASE WHEN f.judged THEN f.d_judge_support END, f.d_support) END,
        'invalid_citation', CASE WHEN f.invalid_citation THEN coalesce(f.d_citations, f.d_judge_citations) END,
        'insufficient_trace', CASE WHEN f.insufficient_trace THEN f.d_sufficiency END
    )) AS evidence,
    CASE
        WHEN f.failing_layers[1] IN ('no_retrieval', 'candidate_miss') THEN 'registry'
        WHEN f.failing_layers[1] = 'unsupported_claims' AND f.judged THEN 'judge'
        WHEN f.failing_layers[1] = 'invalid_citation' AND f.judge_invalid_citation AND NOT coalesce(f.invalid_cited_id, false) THEN 'judge'
        ELSE 'trace'
    END AS basis,
    coalesce(CAST(json_extract(f.d_sufficiency, '$.missing_fields') AS VARCHAR[]), []::VARCHAR[]) AS missing_fields,
    t.query_text,
    t.answer_text
FROM flags f
JOIN traces t ON t.trace_id = f.trace_id
WHERE t.settled_at IS NOT NULL
