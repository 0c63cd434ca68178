-- name: insert_verdicts
-- description: The new verdicts of a batch (registered as _evals, in the column order below).
--   Pair: lake/work/insert_verdicts (tests/store/test_statement_pairs.py holds their shared conditions equal).
-- params: none
-- returns: nothing
INSERT INTO evaluations (trace_id, span_id, case_id, run_id, evaluator, evaluator_version, tier, metric,
                         value, numerator, denominator, status, reason, passed, label, details,
                         generation, evaluated_at)
SELECT * FROM _evals
