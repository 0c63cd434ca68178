-- name: insert_log
-- description: eval_log rows of a batch or a round (registered as _elog).
-- params: none
-- returns: nothing
INSERT INTO eval_log SELECT * FROM _elog
