-- name: append_rows
-- description: Every row of a batch's registered view ({view}: _in_spans, _in_steps, _in_docs) into
--   its table ({table}: spans, steps, step_documents), when every span of the batch is new (a span
--   stored already raises ConstraintException, and the batch is written again deduplicating). No
--   temporary view: DDL inside the ingest transaction costs a catalog change per commit. {columns}
--   is the table's ingest columns (collector.ingest.batch).
-- params: none
-- returns: nothing
INSERT INTO {table} ({columns}) SELECT {columns} FROM {view}
