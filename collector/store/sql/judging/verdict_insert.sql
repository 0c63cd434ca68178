-- name: verdict_insert
-- description: One judge verdict on an item (a claim, a document, an answer).
-- params: none (positional ?, the judge_verdicts columns in order)
-- returns: nothing
INSERT INTO judge_verdicts VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
