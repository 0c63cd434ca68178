-- name: why_no_score
-- description: Why a trace has (or has no) verdicts: the latest scheduling decision per tier from eval_log
--   (evaluated, sampled_out, filtered, over_budget, error, no_case) with its reason, beside the trace's
--   settle and evaluation state, and the claim a collector holds on it (DuckLake: trace_claims): what
--   for, which collector, since and until when, and whether that collector is alive.
--   Pass $trace_id for one trace, or list the latest ones (the 1,000 rows of the traces received last).
--   The traces are chosen first and only their eval_log rows read, so a month of log is not ranked to
--   show a page of it; the latest decision is eval_status's rule (per trace and tier, evaluator NULL).
-- grain: one row per trace_id and tier
-- params: $trace_id VARCHAR = NULL
-- returns: trace_id, tier, decision, reason, generation, logged_at, settled_at, evaluated_at, span_count, claim, claim_holder, claimed_at, claim_expires_at, claim_holder_state
WITH t AS (
    SELECT *
    FROM traces
    WHERE ($trace_id IS NULL OR trace_id = lower($trace_id))
    ORDER BY last_received_at DESC, trace_id
    LIMIT 1000
),
-- eval_status of these traces: their latest scheduling decision per tier
s AS (
    SELECT trace_id, tier, decision, reason, generation, logged_at
    FROM eval_log
    WHERE evaluator IS NULL AND trace_id IN (SELECT trace_id FROM t)
    QUALIFY row_number() OVER (PARTITION BY trace_id, tier ORDER BY logged_at DESC) = 1
)
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
FROM t
LEFT JOIN s ON s.trace_id = t.trace_id
LEFT JOIN (
    SELECT * FROM trace_claims
    WHERE $trace_id IS NULL OR trace_id = lower($trace_id)
    QUALIFY row_number() OVER (PARTITION BY trace_id ORDER BY held DESC, claimed_at DESC NULLS LAST) = 1
) c ON c.trace_id = t.trace_id
ORDER BY t.last_received_at DESC, t.trace_id, s.tier
LIMIT 1000
