-- The former formulation of queries/why_no_score.sql, kept as the definition the bundled query must
-- equal (bench/same_results.py; tests/queries/test_same_results.py). Change both together.
-- name: why_no_score
-- description: Why a trace has (or has no) verdicts: the latest scheduling decision per tier from eval_log
--   (evaluated, sampled_out, filtered, over_budget, error, no_case) with its reason, beside the trace's
--   settle and evaluation state, and the claim a collector holds on it (DuckLake: trace_claims): what
--   for, which collector, since and until when, and whether that collector is alive.
--   Pass $trace_id for one trace, or list the latest undecided ones.
-- grain: one row per trace_id and tier
-- params: $trace_id VARCHAR = NULL
-- returns: trace_id, tier, decision, reason, generation, logged_at, settled_at, evaluated_at, span_count, claim, claim_holder, claimed_at, claim_expires_at, claim_holder_state
SELECT
    t.trace_id,
    s.tier,
    coalesce(s.decision, CASE WHEN t.settled_at IS NULL THEN 'not_settled' ELSE 'pending' END) AS decision,
    s.reason,
    s.generation,
    s.logged_at,
    t.settled_at,
    t.evaluated_at,
    t.span_count,
    c.kind AS claim,
    c.holder AS claim_holder,
    c.claimed_at,
    c.expires_at AS claim_expires_at,
    c.holder_state AS claim_holder_state
FROM traces t
LEFT JOIN eval_status s ON s.trace_id = t.trace_id
LEFT JOIN (
    SELECT * FROM trace_claims
    WHERE $trace_id IS NULL OR trace_id = lower($trace_id)
    QUALIFY row_number() OVER (PARTITION BY trace_id ORDER BY held DESC, claimed_at DESC NULLS LAST) = 1
) c ON c.trace_id = t.trace_id
WHERE ($trace_id IS NULL OR t.trace_id = lower($trace_id))
ORDER BY t.last_received_at DESC, t.trace_id, s.tier
LIMIT 1000
