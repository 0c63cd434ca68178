-- name: demo_mark
-- description: The demo's mark: when it made the file and a note saying what may replace it.
-- params: $made_at TIMESTAMP, $note VARCHAR
-- returns: nothing
INSERT INTO made.ragfault_demo VALUES ($made_at, $note)
