-- Migration 031: the verdicts the gold-set reports read, kept per gold-case trace.
--
-- `case_results`, `layer_metrics` and `refusal_table` read a few metrics of the traces with a gold
-- case out of every verdict of the store: at a million traces (5 % with a gold case, 26 verdict rows a
-- trace) that is a scan of 26 million rows for 0.6 million, on each call. The bundled view
-- `case_verdicts` selects those rows; `case_verdicts_facts` keeps them on a file store, written as the
-- other facts are (`collector/store/file/facts.py`), and the reports read the view. A store that
-- already holds verdicts fills the table when it next opens for writing.

CREATE TABLE case_verdicts_facts (
    trace_id    VARCHAR NOT NULL,
    span_id     VARCHAR,
    case_id     VARCHAR,
    run_id      VARCHAR,
    metric      VARCHAR NOT NULL,
    status      VARCHAR NOT NULL,
    value       DOUBLE,
    numerator   DOUBLE,
    denominator DOUBLE,
    passed      BOOLEAN,
    label       VARCHAR
);

INSERT INTO facts_pending VALUES ('case_verdicts_facts');
