-- name: recent_traces
-- description: The ids of the $n traces received last, which the writer remembers at its first write
--   (file.ingest.KnownTraces): a batch of traces not among them is inserted without ON CONFLICT.
-- params: $n INTEGER
-- returns: trace_id
SELECT trace_id FROM traces ORDER BY last_received_at DESC NULLS LAST LIMIT $n
