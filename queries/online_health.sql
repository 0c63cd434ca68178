-- name: online_health
-- description: Reference-free health signals of live traffic (traces without a gold case), by hour and
--   service: empty retrieval rate, top retrieval score, stale and forbidden documents in context,
--   unsupported-claim rate, refusal rate, retrieval-skipped rate, latency percentiles, tokens, errors,
--   and what users said (traces with negative feedback, thumbs down, mean score).
--   Rates are over the traces where the signal applies (their count is given); NULL when none. A
--   retrieval that recorded neither documents nor an output value is unknown, not empty: the empty
--   retrieval rate is over the retrieval traces whose output is known, and the others are counted.
--   $received_since (optional): a time no span of the traces counted was received before (the least
--   first_received_at of the window's traces, as the live page passes it); it changes no figure, it
--   lets the scans of steps and documents skip older row groups.
-- grain: one row per hour and service_name
-- params: $since TIMESTAMP = NULL, $until TIMESTAMP = NULL, $service VARCHAR = NULL,
--   $received_since TIMESTAMP = NULL
-- returns: hour, service_name, traces, retrieval_traces, empty_retrieval_rate, top_score_p50, top_score_min,
--   stale_context_traces, forbidden_traces, claims, unsupported_claim_rate, refusal_rate, retrieval_skipped_rate,
--   latency_p50_ms, latency_p95_ms, tokens, error_traces, negative_feedback_traces, thumbs_down, mean_feedback_score,
--   retrieval_output_known_traces, retrieval_output_unrecorded_traces
WITH t AS (
    SELECT trace_id, service_name, start_time, date_trunc('hour', start_time) AS hour, error_count
    FROM traces
    WHERE case_id IS NULL AND settled_at IS NOT NULL
      AND trace_id NOT IN (SELECT DISTINCT trace_id FROM evaluations WHERE case_id IS NOT NULL)
      AND ($since IS NULL OR start_time >= CAST($since AS TIMESTAMP))
      AND ($until IS NULL OR start_time < CAST($until AS TIMESTAMP))
      AND ($service IS NULL OR service_name = $service)
),
retr AS (
    SELECT s.trace_id, count(*) AS calls,
        bool_or(coalesce(s.output_text, '') <> '' OR coalesce(s.tool_result, '') <> '') AS output_recorded
    FROM steps s JOIN t USING (trace_id)
    WHERE s.step_type = 'retrieval'
      AND ($received_since IS NULL OR s.received_at >= CAST($received_since AS TIMESTAMP))
    GROUP BY s.trace_id
),
cand AS (
    SELECT d.trace_id, count(*) AS candidates, max(d.score) AS top_score
    FROM step_documents d JOIN t USING (trace_id)
    WHERE d.stage = 'candidate'
      AND ($received_since IS NULL OR d.received_at >= CAST($received_since AS TIMESTAMP))
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
    t.hour,
    t.service_name,
    count(*) AS traces,
    count(retr.trace_id) AS retrieval_traces,
    count(*) FILTER (WHERE retr.output_recorded AND coalesce(cand.candidates, 0) = 0)
        / nullif(count(*) FILTER (WHERE retr.output_recorded OR cand.candidates > 0), 0) AS empty_retrieval_rate,
    quantile_cont(cand.top_score, 0.5) AS top_score_p50,
    min(cand.top_score) AS top_score_min,
    count(*) FILTER (WHERE ev.stale_in_context) AS stale_context_traces,
    count(*) FILTER (WHERE ev.forbidden) AS forbidden_traces,
    sum(ev.claims) AS claims,
    sum(ev.unsupported) / nullif(sum(ev.claims), 0) AS unsupported_claim_rate,
    avg(ev.refused) AS refusal_rate,
    count(*) FILTER (WHERE retr.trace_id IS NULL) / count(*) AS retrieval_skipped_rate,
    quantile_cont(ev.latency_ms, 0.5) AS latency_p50_ms,
    quantile_cont(ev.latency_ms, 0.95) AS latency_p95_ms,
    sum(ev.tokens) AS tokens,
    count(*) FILTER (WHERE t.error_count > 0) AS error_traces,
    count(*) FILTER (WHERE fb.negative_count > 0) AS negative_feedback_traces,
    coalesce(sum(fb.thumbs_down), 0) AS thumbs_down,
    avg(fb.mean_score) AS mean_feedback_score,
    count(*) FILTER (WHERE retr.output_recorded OR cand.candidates > 0) AS retrieval_output_known_traces,
    count(*) FILTER (WHERE retr.trace_id IS NOT NULL AND NOT retr.output_recorded AND cand.candidates IS NULL)
        AS retrieval_output_unrecorded_traces
FROM t
LEFT JOIN retr USING (trace_id)
LEFT JOIN cand USING (trace_id)
LEFT JOIN ev USING (trace_id)
LEFT JOIN trace_feedback fb USING (trace_id)
GROUP BY t.hour, t.service_name
ORDER BY t.hour, t.service_name
