-- name: changes_since
-- description: The knowledge-base changes loads recorded (kb_changes), at or after $since (ISO text;
--   NULL: all), newest first.
-- params: $since VARCHAR = NULL
-- returns: doc_id, change, old_version, new_version, changed_at
SELECT doc_id, change, old_version, new_version, changed_at
FROM kb_changes
WHERE $since IS NULL OR changed_at >= CAST($since AS TIMESTAMP)
ORDER BY changed_at DESC, doc_id
