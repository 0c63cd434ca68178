-- name: trace_health
-- view: trace_health
-- description: The reference-free signals of each settled trace, from its steps, documents and verdicts:
--   what online_health counts by hour and service. retrieval_calls: its retrieval steps (NULL: none);
--   output_recorded: one of them recorded an output value (text or a tool result); candidates and top_score: its
--   candidate documents and their best score (NULL: none); stale_in_context and forbidden: a stale or a
--   forbidden document reached its context (the trace-level verdicts); claims and unsupported: the
--   answer's claims and those the answer-support tier found unsupported; refused: it refused (1) or not
--   (0); latency_ms and tokens; gold_verdicts: a verdict of the trace names a gold case; start_time: the
--   trace's start (a window's filter on it cuts the work); service_name, case_id and error_count: the
--   trace's, for online_health's groups and filters. A verdict's signal is NULL when the trace has no
--   such verdict.
-- grain: one row per settled trace
-- params: none
-- returns: trace_id, start_time, gold_verdicts, retrieval_calls, output_recorded, candidates, top_score,
--   stale_in_context, forbidden, claims, unsupported, refused, latency_ms, tokens, service_name, case_id,
--   error_count
WITH t AS (
    SELECT trace_id, start_time, service_name, case_id, error_count
    FROM traces
    WHERE settled_at IS NOT NULL
),
gold AS (
    SELECT DISTINCT trace_id
    FROM evaluations
    WHERE case_id IS NOT NULL
),
retr AS (
    SELECT s.trace_id, count(*) AS calls,
        bool_or(coalesce(s.output_text, '') <> '' OR coalesce(s.tool_result, '') <> '') AS output_recorded
    FROM steps s JOIN t USING (trace_id)
    WHERE s.step_type = 'retrieval'
    GROUP BY s.trace_id
),
cand AS (
    SELECT d.trace_id, count(*) AS candidates, max(d.score) AS top_score
    FROM step_documents d JOIN t USING (trace_id)
    WHERE d.stage = 'candidate'
    GROUP BY d.trace_id
),
ev AS (
    SELECT
        e.trace_id,
        bool_or(e.metric = 'stale_context' AND e.span_id IS NULL AND e.numerator > 0) AS stale_in_context,
        bool_or(e.metric = 'permission_violations' AND e.span_id IS NULL AND e.numerator > 0) AS forbidden,
        sum(e.denominator) FILTER (WHERE e.metric = 'answer_support' AND e.status = 'ok') AS claims,
        sum(e.denominator - e.numerator) FILTER (WHERE e.metric = 'answer_support' AND e.status = 'ok') AS unsupported,
        max(e.value) FILTER (WHERE e.metric = 'refusal' AND e.status = 'ok') AS refused,
        max(e.value) FILTER (WHERE e.metric = 'latency_ms') AS latency_ms,
        max(e.value) FILTER (WHERE e.metric = 'total_tokens') AS tokens
    FROM evaluations e JOIN t USING (trace_id)
    WHERE e.metric IN ('stale_context', 'permission_violations', 'answer_support', 'refusal', 'latency_ms', 'total_tokens')
    GROUP BY e.trace_id
)
SELECT
    t.trace_id,
    t.start_time,
    gold.trace_id IS NOT NULL AS gold_verdicts,
    retr.calls AS retrieval_calls,
    retr.output_recorded,
    cand.candidates,
    cand.top_score,
    ev.stale_in_context,
    ev.forbidden,
    ev.claims,
    ev.unsupported,
    ev.refused,
    ev.latency_ms,
    ev.tokens,
    t.service_name,
    t.case_id,
    t.error_count
FROM t
LEFT JOIN gold USING (trace_id)
LEFT JOIN retr USING (trace_id)
LEFT JOIN cand USING (trace_id)
LEFT JOIN ev USING (trace_id)
