-- name: append_rows
-- description: Every row of a batch's registered view ({view}: _in_spans, _in_steps, _in_docs) into
--   its raw table ({table}: span_rows, step_rows, step_document_rows), when every span of the batch
--   is new to this collector. {columns} is the table's ingest columns (collector.ingest.batch). A copy
--   another collector stored stays: the views read one row per span (lake.tables.VIEWS).
-- params: none
-- returns: nothing
INSERT INTO {table} ({columns}) SELECT {columns} FROM {view}
