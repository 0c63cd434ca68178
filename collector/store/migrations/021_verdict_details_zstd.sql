-- Migration 021: the evidence behind each verdict (`details`) is stored ZSTD-compressed.
--
-- A trace's verdicts are about sixty rows, most of them with a small JSON object in `details`
-- (the claims and their verdicts, the stale or forbidden documents, the units missed). DuckDB's
-- own choice for that column is a dictionary with FSST, which does little for JSON objects that
-- differ trace by trace. As in migration 020, each table is rebuilt with the same columns in the
-- same order, the rows copied in the order they were written (migration 007's `verdicts_since`
-- relies on `evaluations` keeping that order), the old table dropped. The other columns repeat
-- from row to row (evaluator, metric, status, label) and keep DuckDB's choice.

CREATE TABLE evaluations_021 (
    trace_id          VARCHAR NOT NULL,
    span_id           VARCHAR,
    case_id           VARCHAR,
    run_id            VARCHAR,
    evaluator         VARCHAR NOT NULL,
    evaluator_version VARCHAR NOT NULL,
    tier              VARCHAR NOT NULL,
    metric            VARCHAR NOT NULL,
    value             DOUBLE,
    numerator         DOUBLE,
    denominator       DOUBLE,
    status            VARCHAR NOT NULL,
    reason            VARCHAR,
    passed            BOOLEAN,
    label             VARCHAR,
    details           JSON USING COMPRESSION zstd,
    generation        INTEGER NOT NULL,
    evaluated_at      TIMESTAMP NOT NULL
);
INSERT INTO evaluations_021 SELECT * FROM evaluations;
DROP TABLE evaluations;
ALTER TABLE evaluations_021 RENAME TO evaluations;

-- earlier verdicts: the same columns, none of them NOT NULL (it was made with CREATE TABLE AS)
CREATE TABLE evaluation_history_021 (
    trace_id          VARCHAR,
    span_id           VARCHAR,
    case_id           VARCHAR,
    run_id            VARCHAR,
    evaluator         VARCHAR,
    evaluator_version VARCHAR,
    tier              VARCHAR,
    metric            VARCHAR,
    value             DOUBLE,
    numerator         DOUBLE,
    denominator       DOUBLE,
    status            VARCHAR,
    reason            VARCHAR,
    passed            BOOLEAN,
    label             VARCHAR,
    details           JSON USING COMPRESSION zstd,
    generation        INTEGER,
    evaluated_at      TIMESTAMP
);
INSERT INTO evaluation_history_021 SELECT * FROM evaluation_history;
DROP TABLE evaluation_history;
ALTER TABLE evaluation_history_021 RENAME TO evaluation_history;
