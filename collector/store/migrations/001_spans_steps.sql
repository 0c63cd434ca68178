-- Migration 001: raw spans, normalized steps and step documents, per-trace bookkeeping.
-- Ids are lowercase hex (trace 32 chars, span 16), as OTLP/JSON writes them.

CREATE TABLE spans (
    trace_id                 VARCHAR NOT NULL,
    span_id                  VARCHAR NOT NULL,
    parent_span_id           VARCHAR,
    trace_state              VARCHAR,
    flags                    UINTEGER,
    name                     VARCHAR,
    kind                     VARCHAR,      -- UNSPECIFIED, INTERNAL, SERVER, CLIENT, PRODUCER, CONSUMER
    start_time               TIMESTAMP,    -- UTC
    end_time                 TIMESTAMP,
    start_time_unix_nano     UBIGINT,      -- lossless original
    end_time_unix_nano       UBIGINT,
    duration_ms              DOUBLE,
    status_code              VARCHAR,      -- UNSET, OK, ERROR
    status_message           VARCHAR,
    attributes               JSON,         -- every span attribute, flattened keys as sent
    events                   JSON,
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
    service_name             VARCHAR,      -- resource service.name
    session_id               VARCHAR,
    user_id                  VARCHAR,
    case_id                  VARCHAR,      -- ragfault.case_id
    run_id                   VARCHAR,      -- ragfault.run_id
    step_type                VARCHAR,
    convention               VARCHAR,      -- openinference, genai, traceloop, unknown
    received_at              TIMESTAMP,
    PRIMARY KEY (trace_id, span_id)
);

CREATE TABLE steps (
    trace_id        VARCHAR NOT NULL,
    span_id         VARCHAR NOT NULL,
    parent_span_id  VARCHAR,
    step_type       VARCHAR NOT NULL,  -- retrieval, rerank, llm, tool, agent, chain, embedding, other
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
    query_text      VARCHAR,   -- retrieval / rerank query; for an LLM call the last user message
    input_text      VARCHAR,   -- everything the step received, as text (the whole prompt of an LLM call)
    output_text     VARCHAR,
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
    PRIMARY KEY (trace_id, span_id)
);

CREATE TABLE step_documents (
    trace_id  VARCHAR NOT NULL,
    span_id   VARCHAR NOT NULL,   -- the step that returned (or, for context, received) the document
    stage     VARCHAR NOT NULL,   -- candidate, rerank_input, reranked, context
    position  INTEGER,            -- 0-based rank within the step and stage
    doc_id    VARCHAR,            -- source document id (metadata source key, else the id given)
    chunk_id  VARCHAR,            -- the id as the span gave it (often a chunk UUID)
    content   VARCHAR,
    score     DOUBLE,
    metadata  JSON,
    source    VARCHAR             -- span (as sent), derived (context found in the LLM input)
);

CREATE TABLE traces (
    trace_id          VARCHAR PRIMARY KEY,
    first_received_at TIMESTAMP,
    last_received_at  TIMESTAMP,
    span_count        BIGINT,
    error_count       BIGINT,
    has_root          BOOLEAN,
    root_span_id      VARCHAR,
    root_name         VARCHAR,
    start_time        TIMESTAMP,
    end_time          TIMESTAMP,
    service_name      VARCHAR,
    case_id           VARCHAR,
    run_id            VARCHAR,
    session_id        VARCHAR,
    user_id           VARCHAR,
    query_text        VARCHAR,    -- set when the trace settles
    answer_text       VARCHAR,
    answer_span_id    VARCHAR,    -- the LLM call that produced the answer
    user_scope        VARCHAR[],
    settled_at        TIMESTAMP,  -- last time the trace was assembled
    assembled_spans   BIGINT      -- span_count at that time
);
