-- Migration 027: each gold-case trace's attribution kept as a row, written with its verdicts.
--
-- The `attribution` view computed every trace's root cause from every verdict row each time it was
-- read: seconds at 100,000 traces, growing with the store. `attribution_facts` holds what that
-- computation gives from a trace's verdicts alone (root cause, failing layers, evidence, the metric
-- values, the missing fields), one row a trace with a gold case, replaced in the same transaction as
-- the trace's verdicts are written (`collector/store/facts.py`); the `attribution` view of a file
-- store reads it and joins the gold case and the trace for the rest of its columns. The definition
-- stays `queries/attribution.sql`: the facts are that statement's rows.
--
-- A store that had verdicts before this migration fills the table when it next opens for writing:
-- `facts_pending` names the facts tables still to be computed in full (the fill deletes its row in
-- its own transaction, so a fill cut short is done again).

CREATE TABLE attribution_facts (
    trace_id          VARCHAR NOT NULL,
    case_id           VARCHAR,
    run_id            VARCHAR,
    root_cause        VARCHAR NOT NULL,
    failing_layers    VARCHAR[] NOT NULL,
    evidence          JSON USING COMPRESSION zstd,
    candidate_recall  DOUBLE,
    context_recall    DOUBLE,
    context_retention DOUBLE,
    answer_support    DOUBLE,
    fact_coverage     DOUBLE,
    missing_fields    VARCHAR[] NOT NULL
);

CREATE TABLE live_attribution_facts (
    trace_id       VARCHAR NOT NULL,
    run_id         VARCHAR,
    root_cause     VARCHAR NOT NULL,
    failing_layers VARCHAR[] NOT NULL,
    evidence       JSON USING COMPRESSION zstd,
    basis          VARCHAR NOT NULL,
    missing_fields VARCHAR[] NOT NULL
);

CREATE TABLE trace_health_facts (
    trace_id         VARCHAR NOT NULL,
    gold_verdicts    BOOLEAN NOT NULL,
    retrieval_calls  BIGINT,
    output_recorded  BOOLEAN,
    candidates       BIGINT,
    top_score        DOUBLE,
    stale_in_context BOOLEAN,
    forbidden        BOOLEAN,
    claims           DOUBLE,
    unsupported      DOUBLE,
    refused          DOUBLE,
    latency_ms       DOUBLE,
    tokens           DOUBLE
);

CREATE TABLE facts_pending (
    name VARCHAR PRIMARY KEY
);
INSERT INTO facts_pending VALUES ('attribution_facts'), ('live_attribution_facts'), ('trace_health_facts');
