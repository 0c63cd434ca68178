-- name: shape
-- description: The columns and types of one SELECT with parameters ({body}), without running it: a
--   relation DuckDB makes with parameters is the statement run, a LIMIT 0 of it is bound and planned
--   only. Two columns of one name come back as DuckDB names them in a subquery (a, a_1).
-- params: none
-- returns: the columns of {body}, no row
SELECT * FROM (
{body}
) LIMIT 0
