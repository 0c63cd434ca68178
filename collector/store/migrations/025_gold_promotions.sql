-- Migration 025: gold cases promoted from live traces (ragfault gold promote, POST /api/v1/gold/promote).
--
-- The case itself is a gold_cases row like any other (the same schema as the JSONL files); this
-- table records where it came from: the trace it was written from, the cause live attribution
-- suggested and the cause the reviewer confirmed or corrected, who promoted it and when. A case
-- promoted again replaces its row.

CREATE TABLE gold_promotions (
    case_id         VARCHAR NOT NULL,
    trace_id        VARCHAR NOT NULL,
    service_name    VARCHAR,
    suggested_cause VARCHAR,          -- live_attribution's root cause when the case was written
    cause           VARCHAR NOT NULL, -- the reviewer's confirmed or corrected root cause
    promoted_by     VARCHAR,
    promoted_at     TIMESTAMP NOT NULL
);
