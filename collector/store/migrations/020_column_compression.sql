-- Migration 020: long texts and JSON are stored ZSTD-compressed.
--
-- DuckDB picks a compression per column segment itself, and for a string column it picks a
-- dictionary with FSST: good for values that repeat (a service's resource attributes, a document's
-- text in step_documents), poor for a span's attributes, where each value is a long JSON object
-- holding every document and the whole prompt (15 KB a trace of 22 KB on the bench). Forced ZSTD
-- keeps the same bytes (queries read exactly what was written) in far fewer blocks: a span's
-- attributes 15,259 -> 1,680 B a trace, a step's input text 1,837 -> under 270.
--
-- A column's compression is set when the table is created (DuckDB has no ALTER for it), so each
-- table is rebuilt: a new table with the same columns in the same order, the rows copied, the old
-- one dropped. Columns whose values repeat keep DuckDB's own choice (ZSTD would take more there).
-- The views over these tables (eval_status, trace_feedback) are bound by name when queried.

CREATE TABLE spans_020 (
    trace_id                 VARCHAR NOT NULL,
    span_id                  VARCHAR NOT NULL,
    parent_span_id           VARCHAR,
    trace_state              VARCHAR,
    flags                    UINTEGER,
    name                     VARCHAR,
    kind                     VARCHAR,
    start_time               TIMESTAMP,
    end_time                 TIMESTAMP,
    start_time_unix_nano     UBIGINT,
    end_time_unix_nano       UBIGINT,
    duration_ms              DOUBLE,
    status_code              VARCHAR,
    status_message           VARCHAR,
    attributes               JSON USING COMPRESSION zstd,
    events                   JSON USING COMPRESSION zstd,
    links                    JSON,
    dropped_attributes_count UINTEGER,
    dropped_events_count     UINTEGER,
    dropped_links_count      UINTEGER,
    resource_attributes      JSON,
    resource_schema_url      VARCHAR,
    scope_name               VARCHAR,
    scope_version            VARCHAR,
    scope_attributes         JSON,
    scope_schema_url         VARCHAR,
    service_name             VARCHAR,
    session_id               VARCHAR,
    user_id                  VARCHAR,
    case_id                  VARCHAR,
    run_id                   VARCHAR,
    step_type                VARCHAR,
    convention               VARCHAR,
    received_at              TIMESTAMP,
    feedback                 BOOLEAN,
    PRIMARY KEY (trace_id, span_id)
);
INSERT INTO spans_020 SELECT * FROM spans;
DROP TABLE spans;
ALTER TABLE spans_020 RENAME TO spans;

CREATE TABLE steps_020 (
    trace_id        VARCHAR NOT NULL,
    span_id         VARCHAR NOT NULL,
    parent_span_id  VARCHAR,
    step_type       VARCHAR NOT NULL,
    convention      VARCHAR,
    name            VARCHAR,
    service_name    VARCHAR,
    start_time      TIMESTAMP,
    end_time        TIMESTAMP,
    duration_ms     DOUBLE,
    status_code     VARCHAR,
    model           VARCHAR,
    input_tokens    BIGINT,
    output_tokens   BIGINT,
    total_tokens    BIGINT,
    query_text      VARCHAR USING COMPRESSION zstd,
    input_text      VARCHAR USING COMPRESSION zstd,
    output_text     VARCHAR USING COMPRESSION zstd,
    tool_name       VARCHAR,
    tool_arguments  VARCHAR,
    tool_result     VARCHAR,
    top_k           INTEGER,
    case_id         VARCHAR,
    run_id          VARCHAR,
    session_id      VARCHAR,
    user_id         VARCHAR,
    user_scope      VARCHAR[],
    citations       VARCHAR[],
    is_root         BOOLEAN,
    received_at     TIMESTAMP,
    data_source_id  VARCHAR,
    PRIMARY KEY (trace_id, span_id)
);
INSERT INTO steps_020 SELECT * FROM steps;
DROP TABLE steps;
ALTER TABLE steps_020 RENAME TO steps;

CREATE TABLE gold_cases_020 (
    case_id           VARCHAR PRIMARY KEY,
    query             VARCHAR NOT NULL,
    query_norm        VARCHAR,
    answerable        BOOLEAN,
    expected_behavior VARCHAR,
    category          VARCHAR,
    risk              VARCHAR,
    must_retrieve     BOOLEAN,
    evidence          JSON USING COMPRESSION zstd,
    required_facts    JSON USING COMPRESSION zstd,
    negative_doc_ids  VARCHAR[],
    user_scope        VARCHAR[],
    as_of             TIMESTAMP,
    notes             VARCHAR,
    dataset           VARCHAR,
    loaded_at         TIMESTAMP,
    raw               JSON USING COMPRESSION zstd
);
INSERT INTO gold_cases_020 SELECT * FROM gold_cases;
DROP TABLE gold_cases;
ALTER TABLE gold_cases_020 RENAME TO gold_cases;

CREATE TABLE kb_documents_020 (
    doc_id        VARCHAR PRIMARY KEY,
    version       VARCHAR,
    valid_from    TIMESTAMP,
    valid_to      TIMESTAMP,
    superseded_by VARCHAR,
    acl           VARCHAR[],
    title         VARCHAR,
    content       VARCHAR USING COMPRESSION zstd,
    metadata      JSON,
    loaded_at     TIMESTAMP
);
INSERT INTO kb_documents_020 SELECT * FROM kb_documents;
DROP TABLE kb_documents;
ALTER TABLE kb_documents_020 RENAME TO kb_documents;
