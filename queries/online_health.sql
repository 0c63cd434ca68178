-- name: online_health
-- description: Reference-free health signals of live traffic (traces without a gold case), by hour and
--   service: empty retrieval rate, top retrieval score, stale and forbidden documents in context,
--   unsupported-claim rate, refusal rate, retrieval-skipped rate, latency percentiles, tokens, errors,
--   and what users said (traces with negative feedback, thumbs down, mean score).
--   Rates are over the traces where the signal applies (their count is given); NULL when none. A
--   retrieval that recorded neither documents nor an output value is unknown, not empty: the empty
--   retrieval rate is over the retrieval traces whose output is known, and the others are counted.
--   $received_since (optional): a time no span of the traces counted was received before; it changes
--   no figure (the trace_health view it reads, not traces, now decides the work, so it only adds a
--   filter; kept for callers that pass it). Each trace's signals are the trace_health view's.
-- grain: one row per hour and service_name
-- params: $since TIMESTAMP = NULL, $until TIMESTAMP = NULL, $service VARCHAR = NULL,
--   $received_since TIMESTAMP = NULL
-- returns: hour, service_name, traces, retrieval_traces, empty_retrieval_rate, top_score_p50, top_score_min,
--   stale_context_traces, forbidden_traces, claims, unsupported_claim_rate, refusal_rate, retrieval_skipped_rate,
--   latency_p50_ms, latency_p95_ms, tokens, error_traces, negative_feedback_traces, thumbs_down, mean_feedback_score,
--   retrieval_output_known_traces, retrieval_output_unrecorded_traces
WITH h AS (
    -- each trace's signals (the trace_health view) in the window, but a trace with a gold case or a
    -- verdict naming one
    SELECT * EXCLUDE (gold_verdicts), date_trunc('hour', start_time) AS hour
    FROM trace_health
    WHERE case_id IS NULL AND NOT gold_verdicts
      AND ($since IS NULL OR start_time >= CAST($since AS TIMESTAMP))
      AND ($until IS NULL OR start_time < CAST($until AS TIMESTAMP))
      AND ($service IS NULL OR service_name = $service)
      AND ($received_since IS NULL
           OR trace_id IN (SELECT trace_id FROM traces WHERE first_received_at >= CAST($received_since AS TIMESTAMP)))
)
SELECT
    h.hour,
    h.service_name,
    count(*) AS traces,
    count(h.retrieval_calls) AS retrieval_traces,
    count(*) FILTER (WHERE h.output_recorded AND coalesce(h.candidates, 0) = 0)
        / nullif(count(*) FILTER (WHERE h.output_recorded OR h.candidates > 0), 0) AS empty_retrieval_rate,
    quantile_cont(h.top_score, 0.5) AS top_score_p50,
    min(h.top_score) AS top_score_min,
    count(*) FILTER (WHERE h.stale_in_context) AS stale_context_traces,
    count(*) FILTER (WHERE h.forbidden) AS forbidden_traces,
    sum(h.claims) AS claims,
    sum(h.unsupported) / nullif(sum(h.claims), 0) AS unsupported_claim_rate,
    avg(h.refused) AS refusal_rate,
    count(*) FILTER (WHERE h.retrieval_calls IS NULL) / count(*) AS retrieval_skipped_rate,
    -- both latency quantiles from one list-valued aggregate: one sort of each group's latencies
    quantile_cont(h.latency_ms, [0.5, 0.95])[1] AS latency_p50_ms,
    quantile_cont(h.latency_ms, [0.5, 0.95])[2] AS latency_p95_ms,
    sum(h.tokens) AS tokens,
    count(*) FILTER (WHERE h.error_count > 0) AS error_traces,
    count(*) FILTER (WHERE fb.negative_count > 0) AS negative_feedback_traces,
    coalesce(sum(fb.thumbs_down), 0) AS thumbs_down,
    avg(fb.mean_score) AS mean_feedback_score,
    count(*) FILTER (WHERE h.output_recorded OR h.candidates > 0) AS retrieval_output_known_traces,
    count(*) FILTER (WHERE h.retrieval_calls IS NOT NULL AND NOT h.output_recorded AND h.candidates IS NULL)
        AS retrieval_output_unrecorded_traces
FROM h
LEFT JOIN trace_feedback fb USING (trace_id)
GROUP BY h.hour, h.service_name
ORDER BY h.hour, h.service_name
