-- name: cache_get
-- description: The cached judge response of a key.
-- params: none (positional ?: the key)
-- returns: response
SELECT response FROM judge_cache WHERE key = ?
