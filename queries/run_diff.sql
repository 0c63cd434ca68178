-- name: run_diff
-- description: Run against run, paired by case: each case's root cause in both runs and whether it was
--   fixed, regressed or changed. When a run has several traces of a case, the latest one counts.
-- grain: one row per case_id present in either run
-- params: $base_run VARCHAR, $new_run VARCHAR
-- returns: case_id, category, base_root_cause, new_root_cause, change (fixed, regressed, changed, same,
--   only_base, only_new), base_trace_id, new_trace_id
WITH latest AS (
    SELECT *, row_number() OVER (PARTITION BY run_id, case_id ORDER BY start_time DESC NULLS LAST, trace_id) AS rn
    FROM attribution
    WHERE run_id IN ($base_run, $new_run)
),
b AS (SELECT * FROM latest WHERE run_id = $base_run AND rn = 1),
n AS (SELECT * FROM latest WHERE run_id = $new_run AND rn = 1)
SELECT
    coalesce(b.case_id, n.case_id) AS case_id,
    coalesce(b.category, n.category) AS category,
    b.root_cause AS base_root_cause,
    n.root_cause AS new_root_cause,
    CASE
        WHEN b.case_id IS NULL THEN 'only_new'
        WHEN n.case_id IS NULL THEN 'only_base'
        WHEN b.root_cause = n.root_cause THEN 'same'
        WHEN b.root_cause <> 'ok' AND n.root_cause = 'ok' THEN 'fixed'
        WHEN b.root_cause = 'ok' AND n.root_cause <> 'ok' THEN 'regressed'
        ELSE 'changed'
    END AS change,
    b.trace_id AS base_trace_id,
    n.trace_id AS new_trace_id
FROM b FULL OUTER JOIN n ON b.case_id = n.case_id
ORDER BY change, case_id
