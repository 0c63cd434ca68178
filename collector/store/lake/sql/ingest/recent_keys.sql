-- name: recent_keys
-- description: At a collector's start, the keys ({key}: a span's trace_id || span_id, a record's or a
--   point's id) of the rows of {table} the lake received since $since (from any collector), at most
--   $n: a re-sent one is then not stored twice by a restarted collector.
-- params: $since TIMESTAMP, $n INTEGER
-- returns: the key
SELECT {key} FROM {table} WHERE received_at >= $since LIMIT $n
