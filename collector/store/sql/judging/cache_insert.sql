-- name: cache_insert
-- description: A judge response cached by its key; a key cached already is kept.
-- params: none (positional ?, the judge_cache columns in order)
-- returns: nothing
INSERT OR IGNORE INTO judge_cache VALUES (?, ?, ?, ?, ?, ?, ?, ?)
