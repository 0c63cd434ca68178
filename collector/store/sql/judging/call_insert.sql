-- name: call_insert
-- description: One judge HTTP call as recorded.
-- params: none (positional ?, the judge_calls columns in order)
-- returns: nothing
INSERT INTO judge_calls VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
