-- name: insert_verdicts
-- description: The new verdicts of a batch (registered as _evals, in the column order below) into the
--   lake's evaluation_rows; the evaluations view shows the latest generation of each (trace,
--   evaluator), evaluation_history the earlier ones.
--   Pair: verdicts/insert_verdicts (tests/store/test_statement_pairs.py holds their shared conditions equal).
-- params: none
-- returns: nothing
INSERT INTO evaluation_rows (trace_id, span_id, case_id, run_id, evaluator, evaluator_version, tier, metric,
                             value, numerator, denominator, status, reason, passed, label, details,
                             generation, evaluated_at)
SELECT * FROM _evals
