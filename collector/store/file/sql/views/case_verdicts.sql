-- name: case_verdicts
-- description: The case_verdicts view of a file store: each gold-case trace's rows of case_verdicts_facts
--   as they are now ({body}: facts/current; what queries/case_verdicts.sql selects from its verdicts),
--   whose rows it gives.
-- params: none
-- returns: the columns of queries/case_verdicts.sql
SELECT *
FROM ({body})
