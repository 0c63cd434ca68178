-- Migration 004: live traffic: user feedback and annotations, and views answering
-- "what did users say about this trace" and "why has this trace no score".

-- One row per piece of feedback on a trace or one of its spans. It comes from the API
-- (POST /api/v1/feedback, source 'api') or from spans at ingest: OpenInference annotation /
-- evaluation attributes on a span (source 'span_annotation'), on an EVALUATOR span that points at its
-- target by a link or by its parent (source 'evaluator_span'), and GenAI gen_ai.evaluation.result
-- events (source 'genai_event').
CREATE TABLE feedback (
    feedback_id     VARCHAR PRIMARY KEY,  -- random for the API; derived from the source span for annotations
    trace_id        VARCHAR NOT NULL,     -- the trace the feedback is about
    span_id         VARCHAR,              -- the span it is about; NULL for the whole trace
    kind            VARCHAR NOT NULL,     -- thumbs, score, comment, label
    name            VARCHAR,              -- criterion (annotation name); 'user_feedback' for API thumbs/score
    value           DOUBLE,               -- thumbs: 1 up, 0 down; score: the number
    label           VARCHAR,
    comment         VARCHAR,              -- free text or the annotation explanation
    user_id         VARCHAR,
    annotator_kind  VARCHAR,              -- HUMAN, LLM, CODE (API feedback is HUMAN)
    source          VARCHAR NOT NULL,     -- api, span_annotation, evaluator_span, genai_event
    source_trace_id VARCHAR,              -- where an annotation was read from
    source_span_id  VARCHAR,
    identifier      VARCHAR,              -- producer-assigned result id (OpenInference annotation.identifier)
    metadata        JSON,
    negative        BOOLEAN NOT NULL,     -- negative under the [sampling] feedback policy when it was stored
    created_at      TIMESTAMP NOT NULL
);

-- Feedback summed per trace (the online queries join this).
CREATE VIEW trace_feedback AS
SELECT trace_id,
       count(*)                                        AS feedback_count,
       count(*) FILTER (WHERE negative)                AS negative_count,
       count(*) FILTER (WHERE kind = 'thumbs' AND value > 0)  AS thumbs_up,
       count(*) FILTER (WHERE kind = 'thumbs' AND value <= 0) AS thumbs_down,
       avg(value) FILTER (WHERE kind = 'score')        AS mean_score,
       list(comment ORDER BY created_at) FILTER (WHERE comment IS NOT NULL) AS comments,
       max(created_at)                                 AS last_feedback_at
FROM feedback
GROUP BY trace_id;

-- The latest scheduling decision per trace and tier: "why has this trace no score" is
-- SELECT * FROM eval_status WHERE trace_id = '...'.
CREATE VIEW eval_status AS
SELECT trace_id, tier, decision, reason, generation, logged_at
FROM (
    SELECT *, row_number() OVER (PARTITION BY trace_id, tier ORDER BY logged_at DESC) AS rn
    FROM eval_log
    WHERE evaluator IS NULL
)
WHERE rn = 1;
