-- name: insert_new
-- description: Insert the new feedback rows (new_rows, registered as _fb_new).
-- params: none
-- returns: nothing
INSERT INTO feedback SELECT * FROM _fb_new
