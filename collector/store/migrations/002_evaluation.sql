-- Migration 002: gold cases, the knowledge-base registry, evaluations and the evaluation log.

CREATE TABLE gold_cases (
    case_id           VARCHAR PRIMARY KEY,
    query             VARCHAR NOT NULL,
    query_norm        VARCHAR,          -- normalized query text, for joining traces without a case id
    answerable        BOOLEAN,
    expected_behavior VARCHAR,          -- answer, refuse, correct_premise, clarify
    category          VARCHAR,
    risk              VARCHAR,          -- high, normal
    must_retrieve     BOOLEAN,
    evidence          JSON,             -- [{doc_id, quote, chunk_id, grade} | {any_of: [...]}]
    required_facts    JSON,             -- [{id, text, aliases}]
    negative_doc_ids  VARCHAR[],
    user_scope        VARCHAR[],
    as_of             TIMESTAMP,
    notes             VARCHAR,
    dataset           VARCHAR,          -- the file or body the case came from
    loaded_at         TIMESTAMP,
    raw               JSON
);

CREATE TABLE kb_documents (
    doc_id        VARCHAR PRIMARY KEY,
    version       VARCHAR,
    valid_from    TIMESTAMP,
    valid_to      TIMESTAMP,
    superseded_by VARCHAR,
    acl           VARCHAR[],
    title         VARCHAR,
    content       VARCHAR,
    metadata      JSON,
    loaded_at     TIMESTAMP
);

-- Current verdicts: one row per (trace, step, evaluator, metric). Older verdicts of a trace that was
-- evaluated again (late spans, a reloaded case) move to evaluation_history.
CREATE TABLE evaluations (
    trace_id          VARCHAR NOT NULL,
    span_id           VARCHAR,          -- NULL for a trace-level metric
    case_id           VARCHAR,
    run_id            VARCHAR,
    evaluator         VARCHAR NOT NULL,
    evaluator_version VARCHAR NOT NULL,
    tier              VARCHAR NOT NULL, -- cheap, judge
    metric            VARCHAR NOT NULL,
    value             DOUBLE,
    numerator         DOUBLE,
    denominator       DOUBLE,
    status            VARCHAR NOT NULL, -- ok, not_applicable, error, skipped
    reason            VARCHAR,          -- why not_applicable / skipped / error
    passed            BOOLEAN,          -- the evaluator's verdict under the configured policy (NULL unless ok)
    label             VARCHAR,          -- a categorical outcome, e.g. refused / answered
    details           JSON,             -- the evidence behind the verdict
    generation        INTEGER NOT NULL, -- increments each time the trace is evaluated again
    evaluated_at      TIMESTAMP NOT NULL
);

CREATE TABLE evaluation_history AS SELECT * FROM evaluations WITH NO DATA;

CREATE TABLE eval_log (
    trace_id   VARCHAR NOT NULL,
    tier       VARCHAR,                 -- cheap, judge
    evaluator  VARCHAR,                 -- NULL when the decision covers every evaluator of the tier
    decision   VARCHAR NOT NULL,        -- evaluated, sampled_out, filtered, over_budget, error, no_case
    reason     VARCHAR,
    generation INTEGER,
    logged_at  TIMESTAMP NOT NULL
);

ALTER TABLE traces ADD COLUMN query_norm VARCHAR;  -- normalized query_text, for joining gold cases
ALTER TABLE traces ADD COLUMN eval_generation INTEGER DEFAULT 0;
ALTER TABLE traces ADD COLUMN evaluated_at TIMESTAMP;
ALTER TABLE traces ADD COLUMN evaluated_spans BIGINT;
