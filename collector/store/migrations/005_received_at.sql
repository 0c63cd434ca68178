-- Migration 005: every step and step document carries the time its span was received.
--
-- Reading the steps and documents of a batch of traces joined on trace_id alone scans the whole
-- table (trace ids are random, so DuckDB's min/max statistics per row group cannot skip any), and
-- evaluation and settling slowed down with every trace stored. Rows are appended in the order
-- they are received, so a window on received_at — between the batch's first and last received
-- span, from `traces` — lets a scan skip every row group outside it.
ALTER TABLE steps ADD COLUMN received_at TIMESTAMP;
ALTER TABLE step_documents ADD COLUMN received_at TIMESTAMP;

UPDATE steps SET received_at = s.received_at
FROM spans s WHERE s.trace_id = steps.trace_id AND s.span_id = steps.span_id;

UPDATE step_documents SET received_at = s.received_at
FROM spans s WHERE s.trace_id = step_documents.trace_id AND s.span_id = step_documents.span_id;

-- the first span of a trace may be committed after a later one (decode workers run side by side)
UPDATE traces SET first_received_at = r.first
FROM (SELECT trace_id, min(received_at) AS first FROM spans GROUP BY trace_id) r
WHERE r.trace_id = traces.trace_id AND r.first < traces.first_received_at;
