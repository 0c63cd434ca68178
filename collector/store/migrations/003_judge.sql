-- Migration 003: the LLM judge: its cache, its calls, its verdicts, human labels and the
-- versions it has been trusted at.

-- One answer of the judge per task input. key = sha256 over (task, input, context hash, model,
-- prompt version): a second run with the same judge makes no call.
CREATE TABLE judge_cache (
    key            VARCHAR PRIMARY KEY,
    task           VARCHAR NOT NULL,   -- claims, facts, citation, refusal
    model          VARCHAR NOT NULL,
    prompt_version VARCHAR NOT NULL,
    input_hash     VARCHAR,
    context_hash   VARCHAR,
    response       JSON NOT NULL,      -- the validated output
    created_at     TIMESTAMP NOT NULL
);

-- Every HTTP attempt, including the failed ones (a retry is a second row).
CREATE TABLE judge_calls (
    called_at      TIMESTAMP NOT NULL,
    task           VARCHAR,
    model          VARCHAR NOT NULL,
    prompt_version VARCHAR NOT NULL,
    attempt        INTEGER,
    status         VARCHAR NOT NULL,   -- ok, malformed, rate_limited, server_error, timeout, http_error, transport_error
    http_status    INTEGER,
    input_tokens   BIGINT,
    output_tokens  BIGINT,
    tokens_estimated BOOLEAN,          -- the server reported no usage: chars/4
    cost_usd       DOUBLE,
    latency_ms     DOUBLE,
    error          VARCHAR,
    cache_key      VARCHAR
);

-- The judge's label per item (a claim, or a whole trace for a metric), per judge version: what
-- calibration compares with human labels. source: run (normal judging) or anchor (re-scoring).
CREATE TABLE judge_verdicts (
    trace_id       VARCHAR NOT NULL,
    span_id        VARCHAR,
    metric         VARCHAR NOT NULL,
    claim          VARCHAR,            -- NULL for a trace-level label
    claim_norm     VARCHAR,
    label          VARCHAR NOT NULL,
    value          DOUBLE,
    model          VARCHAR NOT NULL,
    prompt_version VARCHAR NOT NULL,
    source         VARCHAR NOT NULL,
    scored_at      TIMESTAMP NOT NULL
);

CREATE TABLE human_labels (
    trace_id   VARCHAR NOT NULL,
    span_id    VARCHAR,
    metric     VARCHAR NOT NULL,       -- the judge metric the label is about, e.g. judge_answer_support
    claim      VARCHAR,                -- NULL for a trace-level label
    claim_norm VARCHAR,
    label      VARCHAR NOT NULL,       -- supported / contradicted / unsupported, refused / answered, pass / fail
    annotator  VARCHAR NOT NULL,
    anchor     BOOLEAN NOT NULL,       -- part of the fixed anchor set re-scored when the judge changes
    note       VARCHAR,
    labeled_at TIMESTAMP NOT NULL
);

-- Judge versions (model + prompt version) and whether their scores are trusted after the drift check.
CREATE TABLE judge_versions (
    model          VARCHAR NOT NULL,
    prompt_version VARCHAR NOT NULL,
    first_seen     TIMESTAMP NOT NULL,
    anchors_scored_at TIMESTAMP,
    trusted        BOOLEAN NOT NULL DEFAULT false,
    trusted_at     TIMESTAMP,
    drift          JSON,               -- the last drift report against the previous trusted version
    PRIMARY KEY (model, prompt_version)
);
