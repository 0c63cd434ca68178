-- name: version
-- description: What the attribution view reads, as counts and latest times (verdicts, gold cases,
--   settled traces): the UI rebuilds its snapshot of the view when it differs.
-- params: none
-- returns: evaluations, evaluated_at, gold_cases, loaded_at, traces, settled_at
SELECT (SELECT count(*) FROM evaluations), (SELECT max(evaluated_at) FROM evaluations),
       (SELECT count(*) FROM gold_cases), (SELECT max(loaded_at) FROM gold_cases),
       (SELECT count(*) FROM traces), (SELECT max(settled_at) FROM traces)
