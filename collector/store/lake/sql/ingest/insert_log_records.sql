-- name: insert_log_records
-- description: The new log records of a batch (registered as _in_logs, those this collector has not
--   stored lately) into the lake's log_records, the first copy of a record repeated in the batch.
--   {columns} is collector.receivers.signals.LOG_COLUMNS.
-- params: none
-- returns: nothing
INSERT INTO log_records ({columns}) SELECT DISTINCT ON (record_id) {columns} FROM _in_logs
