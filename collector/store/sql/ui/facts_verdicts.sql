-- name: facts_verdicts
-- description: The current verdicts of the traces registered as _ui_ids (what the facts of those traces
--   are computed from), with the columns the facts read; the others are NULL (the verdicts' details,
--   the largest column, are not read: the facts leave out the attribution view's evidence and
--   missing_fields). $since: the evaluated_at bound of their verdicts_since (NULL: every row).
-- params: $since TIMESTAMP = NULL
-- returns: every column of evaluations, NULL but trace_id, span_id, case_id, run_id, metric, value,
--   numerator, denominator, status, passed, label, evaluated_at
SELECT trace_id, span_id, case_id, run_id, CAST(NULL AS VARCHAR) AS evaluator,
       CAST(NULL AS VARCHAR) AS evaluator_version, CAST(NULL AS VARCHAR) AS tier, metric, value, numerator,
       denominator, status, CAST(NULL AS VARCHAR) AS reason, passed, label, CAST(NULL AS JSON) AS details,
       CAST(NULL AS INTEGER) AS generation, evaluated_at
FROM evaluations
WHERE trace_id IN (SELECT trace_id FROM _ui_ids) AND ($since IS NULL OR evaluated_at >= $since)
