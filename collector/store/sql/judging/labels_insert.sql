-- name: labels_insert
-- description: One human label on a judge verdict (a claim, a document, an answer).
-- params: none (positional ?, the human_labels columns in order)
-- returns: nothing
INSERT INTO human_labels VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
