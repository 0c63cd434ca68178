-- name: insert_new_steps
-- description: The steps (_in_steps) of the spans insert_new_spans wrote (registered as _new), each
--   once. {columns} is collector.ingest.batch's STEP_COLUMNS.
-- params: none
-- returns: nothing
INSERT OR IGNORE INTO steps ({columns}) SELECT {columns} FROM _in_steps
WHERE (trace_id, span_id) IN (SELECT trace_id, span_id FROM _new)
