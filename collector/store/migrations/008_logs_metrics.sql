-- Migration 008: the other two OTLP signals, log records and metric data points, stored losslessly;
-- GenAI content events re-open their trace; retrieval steps name their data source.
--
-- Neither a log record nor a data point has an id of its own. Each row's id is a hash of what
-- the exporter sent (collector.receivers.signals): a re-sent record hashes the same and is ignored, and two
-- records that agree in every field (time to the nanosecond, body, attributes, resource, scope)
-- are one record.

CREATE TABLE log_records (
    record_id                VARCHAR PRIMARY KEY,  -- hash of the record, its resource and scope
    trace_id                 VARCHAR,              -- lowercase hex; NULL when the record has none
    span_id                  VARCHAR,
    time                     TIMESTAMP,            -- UTC, from time_unix_nano (else observed)
    time_unix_nano           UBIGINT,              -- lossless originals (0: not set)
    observed_time_unix_nano  UBIGINT,
    severity_number          INTEGER,
    severity_text            VARCHAR,
    event_name               VARCHAR,              -- the record's event_name, else its event.name attribute
    body                     JSON,                 -- the AnyValue body as JSON (a string body is a JSON string)
    body_text                VARCHAR,              -- a string body as it was sent; NULL for structured bodies
    attributes               JSON,
    dropped_attributes_count UINTEGER,
    flags                    UINTEGER,
    resource_attributes      JSON,
    resource_schema_url      VARCHAR,
    scope_name               VARCHAR,
    scope_version            VARCHAR,
    scope_attributes         JSON,
    scope_schema_url         VARCHAR,
    service_name             VARCHAR,
    received_at              TIMESTAMP
);

CREATE TABLE metric_points (
    point_id               VARCHAR PRIMARY KEY,  -- hash of metric, series (attributes, resource, scope) and times
    name                   VARCHAR NOT NULL,     -- e.g. gen_ai.client.token.usage
    description            VARCHAR,
    unit                   VARCHAR,
    kind                   VARCHAR NOT NULL,     -- gauge, sum, histogram, exp_histogram, summary
    temporality            VARCHAR,              -- cumulative, delta (sums and histograms); NULL otherwise
    is_monotonic           BOOLEAN,              -- sums only
    attributes             JSON,                 -- the data point's attributes
    start_time             TIMESTAMP,
    time                   TIMESTAMP,
    start_time_unix_nano   UBIGINT,
    time_unix_nano         UBIGINT,
    value                  DOUBLE,               -- gauge and sum points
    count                  UBIGINT,              -- histograms and summaries
    sum                    DOUBLE,
    min                    DOUBLE,
    max                    DOUBLE,
    bucket_counts          UBIGINT[],            -- histogram: one more count than bounds
    explicit_bounds        DOUBLE[],
    exp_histogram          JSON,                 -- scale, zero_count, zero_threshold, positive/negative {offset, bucket_counts}
    quantiles              JSON,                 -- summary: [{quantile, value}]
    exemplars              JSON,
    flags                  UINTEGER,
    resource_attributes    JSON,
    resource_schema_url    VARCHAR,
    scope_name             VARCHAR,
    scope_version          VARCHAR,
    scope_attributes       JSON,
    service_name           VARCHAR,
    received_at            TIMESTAMP
);

-- GenAI content events (log records of collector.normalize.genai_events.CONTENT_EVENTS) stored for
-- a trace after its first span. assembled_spans counts them with the spans: one that arrives after
-- the trace settled makes it settle (and be evaluated) again, as a late span does.
ALTER TABLE traces ADD COLUMN content_events BIGINT DEFAULT 0;

-- the knowledge source a retrieval searched (gen_ai.data_source.id)
ALTER TABLE steps ADD COLUMN data_source_id VARCHAR;

-- where a document's content came from: NULL as the span sent it; 'registry' when the span sent
-- only its id (the GenAI spec's {id, score}) and the text is the knowledge-base registry's, filled
-- in when the trace settled
ALTER TABLE step_documents ADD COLUMN content_source VARCHAR;
