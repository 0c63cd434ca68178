-- name: attribution
-- view: attribution
-- description: Root cause and every failing layer per evaluated trace that has a gold case (docs/architecture.md, Attribution order).
--   The root cause is the first failing layer in the order: permission_violation, no_retrieval,
--   evidence_not_in_kb, stale_context, candidate_miss, not_opened, dropped_before_context, answered_unanswerable,
--   over_refusal, unsupported_claims, incomplete_answer, invalid_citation, insufficient_trace; else ok.
--   insufficient_trace comes after every real layer: no layer failed, but some could not be checked
--   because the trace lacks what they need (trace_sufficiency failed); missing_fields names them
--   (answer, answer_llm_input, retrieval_step, retrieval_output, document_text). A trace that cannot tell is
--   never ok.
--   A layer fails when its evaluator's verdict (evaluations.passed) is false under the configured policy.
--   over_refusal needs to know what the model saw: a refusal whose answering LLM input is unknown
--   (missing_fields holds answer_llm_input) is insufficient_trace, not over_refusal.
--   Unsupported claims use the judge's verdict when the judge scored the trace, else the lexical checker's.
-- grain: one row per trace_id with a gold case
-- params: none
-- returns: trace_id, case_id, run_id, root_cause, failing_layers, evidence (JSON object: for each
--   failing layer, the evaluator details behind it), category, risk, service_name, start_time, query_text, answer_text,
--   candidate_recall, context_recall, context_retention, answer_support, fact_coverage,
--   missing_fields (VARCHAR[]: the fields the trace lacks, empty when none)
WITH gold_traces AS (
    SELECT trace_id, any_value(case_id) AS case_id, any_value(run_id) AS run_id
    FROM evaluations
    WHERE case_id IS NOT NULL AND status IN ('ok', 'not_applicable')
    GROUP BY trace_id
),
-- The verdicts are read in narrow passes rather than one wide one (one wide pass over every verdict
-- took seconds at 100,000 traces): a layer fails on a verdict with passed = false, so its flag and the
-- details shown for it come from the failed rows alone (`details` is the large column; a scan skips the
-- stored blocks where nothing failed), and the labels and values the layers also read (answerability's
-- label, context_recall, the judge's status, the metric values returned) from the metrics that carry them.
measured AS (
    SELECT
        trace_id,
        bool_or(metric = 'answerability' AND label = 'answered_unanswerable') AS answered_unanswerable,
        bool_or(metric = 'answerability' AND label = 'refused_answerable') AS refused_answerable,
        bool_or(metric = 'context_recall' AND status = 'ok' AND numerator = 0) AS evidence_absent_from_context,
        bool_or(metric = 'judge_answer_support' AND status = 'ok') AS judged,
        any_value(value) FILTER (WHERE metric = 'candidate_recall') AS candidate_recall,
        any_value(value) FILTER (WHERE metric = 'context_recall') AS context_recall,
        any_value(value) FILTER (WHERE metric = 'context_retention') AS context_retention,
        any_value(value) FILTER (WHERE metric = 'answer_support') AS answer_support,
        any_value(value) FILTER (WHERE metric = 'fact_coverage') AS fact_coverage
    FROM evaluations
    WHERE case_id IS NOT NULL AND status IN ('ok', 'not_applicable')
      AND metric IN ('answerability', 'context_recall', 'judge_answer_support', 'candidate_recall',
                     'context_retention', 'answer_support', 'fact_coverage')
    GROUP BY trace_id
),
-- answerability's failing labels (answered_unanswerable, refused_answerable) are its failed verdicts,
-- and missing_fields is empty unless trace_sufficiency failed: their details are among these rows too
failed AS (
    SELECT
        trace_id,
        bool_or(metric = 'permission_violations' AND span_id IS NULL) AS permission_violation,
        bool_or(metric = 'retrieval_decision') AS no_retrieval,
        bool_or(metric = 'evidence_in_kb') AS evidence_not_in_kb,
        bool_or(metric = 'stale_context' AND span_id IS NULL) AS stale_context,
        bool_or(metric = 'candidate_recall') AS candidate_miss,
        bool_or(metric = 'evidence_opened') AS not_opened,
        bool_or(metric = 'context_retention') AS dropped_before_context,
        bool_or(metric = 'judge_answer_support') AS judge_unsupported,
        bool_or(metric = 'answer_support') AS lexical_unsupported,
        bool_or(metric = 'facts_missing_in_context') AS incomplete_answer,
        bool_or(metric IN ('citation_validity', 'judge_citation_support')) AS invalid_citation,
        bool_or(metric = 'trace_sufficiency') AS insufficient_trace,
        any_value(details) FILTER (WHERE metric = 'permission_violations' AND span_id IS NULL) AS d_permission,
        any_value(details) FILTER (WHERE metric = 'retrieval_decision') AS d_retrieval,
        any_value(details) FILTER (WHERE metric = 'evidence_in_kb') AS d_kb,
        any_value(details) FILTER (WHERE metric = 'stale_context' AND span_id IS NULL) AS d_stale,
        any_value(details) FILTER (WHERE metric = 'candidate_recall') AS d_recall,
        any_value(details) FILTER (WHERE metric = 'evidence_opened') AS d_opened,
        any_value(details) FILTER (WHERE metric = 'context_retention') AS d_retention,
        any_value(details) FILTER (WHERE metric = 'answerability') AS d_answerability,
        any_value(details) FILTER (WHERE metric = 'judge_answer_support') AS d_judge_support,
        any_value(details) FILTER (WHERE metric = 'answer_support') AS d_support,
        any_value(details) FILTER (WHERE metric = 'facts_missing_in_context') AS d_facts,
        any_value(details) FILTER (WHERE metric = 'citation_validity') AS d_citations,
        any_value(details) FILTER (WHERE metric = 'trace_sufficiency') AS d_sufficiency
    FROM evaluations
    WHERE case_id IS NOT NULL AND status IN ('ok', 'not_applicable') AND passed = false
      AND metric IN ('permission_violations', 'retrieval_decision', 'evidence_in_kb', 'stale_context',
                     'candidate_recall', 'evidence_opened', 'context_retention', 'answerability',
                     'judge_answer_support', 'answer_support', 'facts_missing_in_context', 'citation_validity',
                     'judge_citation_support', 'trace_sufficiency')
    GROUP BY trace_id
),
-- a refusal whose answering LLM input is unknown is insufficient_trace, not over_refusal
prompt_unknown AS (
    SELECT trace_id
    FROM evaluations
    WHERE case_id IS NOT NULL AND status IN ('ok', 'not_applicable') AND metric = 'trace_sufficiency' AND passed = false
      AND list_contains(CAST(json_extract(details, '$.missing_fields') AS VARCHAR[]), 'answer_llm_input')
),
layers AS (
    SELECT
        g.trace_id,
        g.case_id,
        g.run_id,
        m.* EXCLUDE (trace_id),
        x.* EXCLUDE (trace_id),
        m.refused_answerable AND NOT coalesce(m.evidence_absent_from_context, false)
            AND g.trace_id NOT IN (SELECT trace_id FROM prompt_unknown) AS over_refusal,
        CASE WHEN m.judged THEN x.judge_unsupported ELSE x.lexical_unsupported END AS unsupported_claims
    FROM gold_traces g
    LEFT JOIN measured m ON m.trace_id = g.trace_id
    LEFT JOIN failed x ON x.trace_id = g.trace_id
),
flags AS (
    SELECT
        *,
        list_filter(
            [
                CASE WHEN permission_violation THEN 'permission_violation' END,
                CASE WHEN no_retrieval THEN 'no_retrieval' END,
                CASE WHEN evidence_not_in_kb THEN 'evidence_not_in_kb' END,
                CASE WHEN stale_context THEN 'stale_context' END,
                CASE WHEN candidate_miss THEN 'candidate_miss' END,
                CASE WHEN not_opened THEN 'not_opened' END,
                CASE WHEN dropped_before_context THEN 'dropped_before_context' END,
                CASE WHEN answered_unanswerable THEN 'answered_unanswerable' END,
                CASE WHEN over_refusal THEN 'over_refusal' END,
                CASE WHEN unsupported_claims THEN 'unsupported_claims' END,
                CASE WHEN incomplete_answer THEN 'incomplete_answer' END,
                CASE WHEN invalid_citation THEN 'invalid_citation' END,
                CASE WHEN insufficient_trace THEN 'insufficient_trace' END
            ],
            lambda x: x IS NOT NULL
        ) AS failing_layers
    FROM layers
)
SELECT
    f.trace_id,
    f.case_id,
    f.run_id,
    coalesce(f.failing_layers[1], 'ok') AS root_cause,
    f.failing_layers,
    json_merge_patch('{}', json_object(
        'permission_violation', CASE WHEN f.permission_violation THEN f.d_permission END,
        'no_retrieval', CASE WHEN f.no_retrieval THEN f.d_retrieval END,
        'evidence_not_in_kb', CASE WHEN f.evidence_not_in_kb THEN f.d_kb END,
        'stale_context', CASE WHEN f.stale_context THEN f.d_stale END,
        'candidate_miss', CASE WHEN f.candidate_miss THEN f.d_recall END,
        'not_opened', CASE WHEN f.not_opened THEN f.d_opened END,
        'dropped_before_context', CASE WHEN f.dropped_before_context THEN f.d_retention END,
        'answered_unanswerable', CASE WHEN f.answered_unanswerable THEN f.d_answerability END,
        'over_refusal', CASE WHEN f.over_refusal THEN f.d_answerability END,
        'unsupported_claims', CASE WHEN f.unsupported_claims THEN coalesce(CASE WHEN f.judged THEN f.d_judge_support END, f.d_support) END,
        'incomplete_answer', CASE WHEN f.incomplete_answer THEN f.d_facts END,
        'invalid_citation', CASE WHEN f.invalid_citation THEN f.d_citations END,
        'insufficient_trace', CASE WHEN f.insufficient_trace THEN f.d_sufficiency END
    )) AS evidence,
    g.category,
    g.risk,
    t.service_name,
    t.start_time,
    t.query_text,
    t.answer_text,
    f.candidate_recall,
    f.context_recall,
    f.context_retention,
    f.answer_support,
    f.fact_coverage,
    coalesce(CAST(json_extract(f.d_sufficiency, '$.missing_fields') AS VARCHAR[]), []::VARCHAR[]) AS missing_fields
FROM flags f
LEFT JOIN gold_cases g ON g.case_id = f.case_id
LEFT JOIN traces t ON t.trace_id = f.trace_id
