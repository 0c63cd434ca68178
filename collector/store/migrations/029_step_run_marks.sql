-- Migration 029: a run's marks sent on its spans, kept as columns of the span's step.
--
-- `ragfault.run_group` (the configuration a run repeats) and `ragfault.baseline_of` (the run a run is
-- the closed-book twin of) may be set on any span of the run, plain, under the baggage prefixes or
-- inside OpenInference `metadata`. The run_marks view found them by casting every span's attributes
-- to text and matching it: seconds a read at 1,000,000 traces (its every read, and closed_book's).
-- The normalizer now reads them as it reads `ragfault.run_id`, into `steps.run_group` and
-- `steps.baseline_of`; the view reads those two columns.
--
-- Steps stored before take their marks from their spans' attributes here, once: the same keys and
-- order the view read them in (the plain key, then the two prefixes, then `metadata`'s dotted key,
-- then its nested one; an empty value is no mark).

ALTER TABLE steps ADD COLUMN run_group VARCHAR;
ALTER TABLE steps ADD COLUMN baseline_of VARCHAR;

UPDATE steps
SET run_group = m.run_group, baseline_of = m.baseline_of
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
        FROM spans
        WHERE CAST(attributes AS VARCHAR) LIKE '%run\_group%' ESCAPE '\'
           OR CAST(attributes AS VARCHAR) LIKE '%baseline\_of%' ESCAPE '\'
    ) raw
) m
WHERE steps.trace_id = m.trace_id AND steps.span_id = m.span_id
  AND (m.run_group IS NOT NULL OR m.baseline_of IS NOT NULL);
