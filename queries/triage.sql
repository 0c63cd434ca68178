-- name: triage
-- description: Live traces worth a person's look, most urgent first: negative user feedback, a live_attribution
--   failure (a root cause the trace or the registry proves), or an evaluation trigger. Live means no gold
--   case joins the trace yet (it is not in attribution) and it was not promoted already. Order: negative
--   feedback before a proven cause before a trigger alone; then the cause in attribution's order
--   (permission_violation first); then the newest. $per_service and $per_day cap how many rows one service,
--   and one day (UTC, all services), may take, so one noisy service or one bad day cannot fill the queue.
--   Each row carries what a reviewer needs: the question, the answer, the suspected layer and its evidence.
-- grain: one row per live trace with a reason to look
-- params: $service VARCHAR = NULL, $since TIMESTAMP = NULL, $per_service INTEGER = NULL, $per_day INTEGER = NULL,
--   $limit INTEGER = 100
-- returns: trace_id, service_name, start_time, day, reasons (VARCHAR[]: negative_feedback, live_attribution,
--   trigger), root_cause, failing_layers, evidence (JSON), basis, missing_fields, question, answer,
--   thumbs_down, negative_feedback, comments, triggers, priority (lower is more urgent)
WITH triggered AS (
    -- eval_status's rule (each tier's latest decision), taken only over the traces whose log names a
    -- trigger at all: the view ranks every trace's log, which DuckDB cannot cut to these first
    SELECT trace_id, string_agg(DISTINCT regexp_extract(reason, 'trigger:([A-Za-z0-9_,:.-]+)', 1), ',') AS triggers
    FROM (
        SELECT trace_id, reason
        FROM eval_log
        WHERE evaluator IS NULL
          AND trace_id IN (SELECT trace_id FROM eval_log WHERE reason LIKE '%trigger:%')
        QUALIFY row_number() OVER (PARTITION BY trace_id, tier ORDER BY logged_at DESC) = 1
    ) latest
    WHERE reason LIKE '%trigger:%'
    GROUP BY trace_id
),
candidates AS MATERIALIZED (
    -- made once, with only the traces that have a reason to look: the ranking reads its narrow columns,
    -- and the rows chosen take the rest from it (their question and answer from traces)
    SELECT
        t.trace_id,
        t.service_name,
        t.start_time,
        CAST(t.start_time AS DATE) AS day,
        la.root_cause,
        la.failing_layers,
        la.evidence,
        la.basis,
        la.missing_fields,
        coalesce(f.thumbs_down, 0) AS thumbs_down,
        coalesce(f.negative_count, 0) AS negative_feedback,
        f.comments,
        tr.triggers,
        coalesce(f.negative_count, 0) > 0 AS by_feedback,
        coalesce(la.root_cause NOT IN ('none_seen', 'insufficient_trace'), false) AS by_cause,
        tr.triggers IS NOT NULL AS by_trigger
    FROM traces t
    -- the window's filters repeated on the view's own columns (the same trace's) cut its work to them
    LEFT JOIN (
        SELECT *
        FROM live_attribution
        WHERE ($service IS NULL OR service_name = $service)
          AND ($since IS NULL OR start_time >= $since)
    ) la ON la.trace_id = t.trace_id
    LEFT JOIN trace_feedback f ON f.trace_id = t.trace_id
    LEFT JOIN triggered tr ON tr.trace_id = t.trace_id
    WHERE t.settled_at IS NOT NULL
      AND ($service IS NULL OR t.service_name = $service)
      AND ($since IS NULL OR t.start_time >= $since)
      -- a reason to look (the flags above, by their names)
      AND (by_feedback OR by_cause OR by_trigger)
      -- not a trace attribution covers (one with a gold case's verdict)
      AND t.trace_id NOT IN (SELECT a.trace_id FROM attribution a WHERE ($since IS NULL OR a.start_time >= $since))
      -- nor one promoted already
      AND t.trace_id NOT IN (SELECT p.trace_id FROM gold_promotions p WHERE p.trace_id IS NOT NULL)
),
ranked AS (
    SELECT
        trace_id, service_name, start_time, day,
        (CASE WHEN by_feedback THEN 0 WHEN by_cause THEN 100 ELSE 200 END)
            + coalesce(list_position(
                ['permission_violation', 'no_retrieval', 'stale_context', 'candidate_miss',
                 'dropped_before_context', 'over_refusal', 'unsupported_claims', 'invalid_citation',
                 'insufficient_trace', 'none_seen'], root_cause), 11) AS priority
    FROM candidates
),
capped AS (
    SELECT
        *,
        row_number() OVER (PARTITION BY service_name ORDER BY priority, start_time DESC, trace_id) AS nth_of_service,
        row_number() OVER (PARTITION BY day ORDER BY priority, start_time DESC, trace_id) AS nth_of_day
    FROM ranked
    -- the caps' windows only when a cap is asked: they order every candidate
    WHERE $per_service IS NOT NULL OR $per_day IS NOT NULL
    UNION ALL
    SELECT *, NULL AS nth_of_service, NULL AS nth_of_day
    FROM ranked
    WHERE $per_service IS NULL AND $per_day IS NULL
),
chosen AS (
    SELECT trace_id, priority
    FROM capped
    WHERE ($per_service IS NULL OR nth_of_service <= $per_service)
      AND ($per_day IS NULL OR nth_of_day <= $per_day)
    ORDER BY priority, start_time DESC, trace_id
    LIMIT $limit
)
SELECT
    c.trace_id,
    c.service_name,
    c.start_time,
    c.day,
    list_filter(
        [CASE WHEN c.by_feedback THEN 'negative_feedback' END,
         CASE WHEN c.by_cause THEN 'live_attribution' END,
         CASE WHEN c.by_trigger THEN 'trigger' END],
        lambda x: x IS NOT NULL
    ) AS reasons,
    c.root_cause,
    c.failing_layers,
    c.evidence,
    c.basis,
    c.missing_fields,
    t.query_text AS question,
    t.answer_text AS answer,
    c.thumbs_down,
    c.negative_feedback,
    c.comments,
    c.triggers,
    ch.priority
FROM chosen ch
JOIN candidates c ON c.trace_id = ch.trace_id
JOIN traces t ON t.trace_id = ch.trace_id
ORDER BY ch.priority, c.start_time DESC, c.trace_id
