-- Migration 030: what each trace carries that attribution needs, kept as a row; the health facts
-- carry the trace's own columns.
--
-- `coverage` (`ragfault doctor`, GET /api/v1/coverage) read every step and document of the traces it
-- counted on each call: 10 s over a month of a million traces, growing with the store. The bundled
-- view `trace_coverage` gives each settled trace's fields from its own rows, and `coverage` adds them
-- up per service and convention, looking the registry up for what only the registry can give.
-- `trace_coverage_facts` keeps the view's rows on a file store, written as the other facts are
-- (`collector/store/file/facts.py`); a store that already holds traces fills the table when it next
-- opens for writing.

CREATE TABLE trace_coverage_facts (
    trace_id            VARCHAR NOT NULL,
    start_time          TIMESTAMP,
    service_name        VARCHAR NOT NULL,
    convention          VARCHAR NOT NULL,
    query               BOOLEAN NOT NULL,
    case_id             BOOLEAN NOT NULL,
    trace_scope         BOOLEAN NOT NULL,
    case_scope          BOOLEAN NOT NULL,
    retrieval_step      BOOLEAN NOT NULL,
    rerank_step         BOOLEAN NOT NULL,
    llm_step            BOOLEAN NOT NULL,
    candidates          BIGINT,
    candidate_ids       BOOLEAN NOT NULL,
    texted_candidates   BIGINT,
    untexted_candidates STRUCT(doc_id VARCHAR, chunk_id VARCHAR)[] NOT NULL,
    rerank_input        BOOLEAN NOT NULL,
    rerank_output       BOOLEAN NOT NULL,
    answer_llm_input    BOOLEAN NOT NULL,
    context             BOOLEAN NOT NULL,
    answer              BOOLEAN NOT NULL,
    citations           BOOLEAN NOT NULL,
    registry_markers    VARCHAR[] NOT NULL,
    model               BOOLEAN NOT NULL,
    tokens              BOOLEAN NOT NULL
);

INSERT INTO facts_pending VALUES ('trace_coverage_facts');

-- `trace_health_facts` also keeps the trace's start, service, case id and error count (the view's
-- new columns), so that its view and `online_health` over a month read the facts, not a join of
-- every trace: the table is made again and computed in full at the next open.
DROP TABLE trace_health_facts;

CREATE TABLE trace_health_facts (
    trace_id         VARCHAR NOT NULL,
    start_time       TIMESTAMP,
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
    tokens           DOUBLE,
    service_name     VARCHAR,
    case_id          VARCHAR,
    error_count      BIGINT
);

INSERT INTO facts_pending VALUES ('trace_health_facts') ON CONFLICT DO NOTHING;
