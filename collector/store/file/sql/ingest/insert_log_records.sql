-- name: insert_log_records
-- description: The log records of a batch (registered as _in_logs) not stored yet, the first copy of
--   a record repeated in the batch (a re-sent record has the same id). {columns} is
--   collector.receivers.signals.LOG_COLUMNS. (The lake appends its own: lake/ingest/insert_log_records.)
-- params: none
-- returns: trace_id, event_name, received_at, span_id, service_name of each record written
INSERT OR IGNORE INTO log_records ({columns}) SELECT DISTINCT ON (record_id) {columns} FROM _in_logs
RETURNING trace_id, event_name, received_at, span_id, service_name
