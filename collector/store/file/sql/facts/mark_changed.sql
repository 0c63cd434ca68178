-- name: mark_changed
-- description: The traces registered as _done have rows a write just changed: their facts are to be
--   computed again from their verdicts written from $since on and their rows received from
--   $received_since on (NULL: not known, every row is read).
-- params: $since TIMESTAMP = NULL, $received_since TIMESTAMP = NULL
-- returns: count
INSERT INTO facts_changed (trace_id, since, received_since)
SELECT DISTINCT
    trace_id,
    coalesce($since, TIMESTAMP '-infinity'),
    coalesce($received_since, TIMESTAMP '-infinity')
FROM _done
