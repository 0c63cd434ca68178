-- name: backfill_run_marks
-- description: A lake's steps stored before steps.run_group and steps.baseline_of existed take their
--   run's marks from their spans' attributes, once, when the columns are added: the keys and order of
--   the file store's migration 029 (the plain key, the two baggage prefixes, then OpenInference
--   metadata's dotted key and its nested one; an empty value is no mark). A span stored twice in the
--   raw table gives one value.
-- params: none
-- returns: nothing (an UPDATE)
UPDATE step_rows
SET run_group = m.run_group, baseline_of = m.baseline_of
FROM (
    SELECT trace_id, span_id, any_value(run_group) AS run_group, any_value(baseline_of) AS baseline_of
    FROM (
        SELECT
            trace_id,
            span_id,
            nullif(coalesce(a->>'$."ragfault.run_group"', a->>'$."traceloop.association.properties.ragfault.run_group"',
                     a->>'$."baggage.ragfault.run_group"', meta->>'$."ragfault.run_group"',
                     meta->>'$.ragfault.run_group'), '') AS run_group,
            nullif(coalesce(a->>'$."ragfault.baseline_of"', a->>'$."traceloop.association.properties.ragfault.baseline_of"',
                     a->>'$."baggage.ragfault.baseline_of"', meta->>'$."ragfault.baseline_of"',
                     meta->>'$.ragfault.baseline_of'), '') AS baseline_of
        FROM (
            SELECT
                trace_id,
                span_id,
                CAST(attributes AS VARCHAR) AS a,
                CASE WHEN json_valid(attributes->>'$.metadata') THEN attributes->>'$.metadata' END AS meta
            FROM span_rows
            WHERE CAST(attributes AS VARCHAR) LIKE '%run\_group%' ESCAPE '\'
               OR CAST(attributes AS VARCHAR) LIKE '%baseline\_of%' ESCAPE '\'
        ) raw
    ) marks
    WHERE run_group IS NOT NULL OR baseline_of IS NOT NULL
    GROUP BY trace_id, span_id
) m
WHERE step_rows.trace_id = m.trace_id AND step_rows.span_id = m.span_id
