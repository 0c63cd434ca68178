-- name: why_no_score
-- description: Why a trace has (or has no) verdicts: the latest scheduling decision per tier from eval_log
--   (evaluated, sampled_out, filtered, over_budget, error, no_case) with its reason, beside the trace's
--   settle and evaluation state. Pass $trace_id for one trace, or list the latest undecided ones.
-- grain: one row per trace_id and tier
-- params: $trace_id VARCHAR = NULL
-- returns: trace_id, tier, decision, reason, generation, logged_at, settled_at, evaluated_at, span_count
SELECT
    t.trace_id,
    s.tier,
    coalesce(s.decision, CASE WHEN t.settled_at IS NULL THEN 'not_settled' ELSE 'pending' END) AS decision,
    s.reason,
    s.generation,
    s.logged_at,
    t.settled_at,
    t.evaluated_at,
    t.span_count
FROM traces t
LEFT JOIN eval_status s ON s.trace_id = t.trace_id
WHERE ($trace_id IS NULL OR t.trace_id = lower($trace_id))
ORDER BY t.last_received_at DESC
LIMIT 1000
