-- name: closed_book
-- description: A run paired case by case with its closed-book twin (a run whose traces carry
--   ragfault.baseline_of = the run, answered with retrieval switched off): helped (wrong without
--   retrieval, right with it), hurt (right without, wrong with), parametric (right both ways: the model
--   knew), neither (wrong both ways); unknown when either answer cannot be judged. Right: an
--   unanswerable case refused; an answerable case answered (not refused) with every required fact
--   covered, or, when the case lists no required facts, with every claim supported. Reliance is the
--   case's `reliance`, else `strong` for the categories in $strong_categories (comma-separated), else
--   `supplementary`; a parametric answer of a strong-reliance case is flagged: it will break when the
--   knowledge base changes.
-- grain: one row per (run, closed-book run, case) answered in both
-- params: $run_id VARCHAR = NULL, $closed_run VARCHAR = NULL, $strong_categories VARCHAR = 'policy,pricing'
-- returns: run_id, closed_run, case_id, category, risk, expected_behavior, answerable, reliance,
--   outcome, flagged, rag_right, closed_right, rag_root_cause, rag_trace_id, closed_trace_id
WITH twins AS (
    SELECT run_id AS closed_run, baseline_of AS rag_run
    FROM run_marks
    WHERE baseline_of IS NOT NULL
      AND ($run_id IS NULL OR baseline_of = $run_id)
      AND ($closed_run IS NULL OR run_id = $closed_run)
),
-- the latest trace of each case in each run, with the verdict values that say whether it is right
-- (aggregated from the small columns before the join)
latest AS (
    SELECT trace_id, case_id, run_id, root_cause
    FROM attribution
    WHERE run_id IN (SELECT rag_run FROM twins) OR run_id IN (SELECT closed_run FROM twins)
    QUALIFY row_number() OVER (PARTITION BY run_id, case_id ORDER BY start_time DESC NULLS LAST, trace_id) = 1
),
res AS (
    SELECT
        a.trace_id, a.case_id, a.run_id, a.root_cause,
        any_value(e.label) FILTER (WHERE e.metric = 'answerability') AS answerability,
        any_value(e.value) FILTER (WHERE e.metric = 'fact_coverage') AS fact_coverage,
        any_value(e.numerator) FILTER (WHERE e.metric = 'answer_support') AS sup_num,
        any_value(e.denominator) FILTER (WHERE e.metric = 'answer_support') AS sup_den
    FROM latest a
    LEFT JOIN evaluations e ON e.trace_id = a.trace_id AND e.status = 'ok'
        AND e.metric IN ('answerability', 'fact_coverage', 'answer_support')
    GROUP BY a.trace_id, a.case_id, a.run_id, a.root_cause
),
judged AS (
    SELECT
        *,
        CASE
            WHEN answerability IS NULL THEN NULL
            WHEN answerability LIKE '%\_unanswerable' ESCAPE '\' THEN answerability = 'refused_unanswerable'
            WHEN answerability = 'refused_answerable' THEN false
            WHEN fact_coverage IS NOT NULL THEN fact_coverage = 1
            WHEN sup_den > 0 THEN sup_num = sup_den
        END AS is_right
    FROM res
),
paired AS (
    SELECT
        t.rag_run AS run_id, t.closed_run, r.case_id,
        r.is_right AS rag_right, c.is_right AS closed_right,
        r.root_cause AS rag_root_cause, r.trace_id AS rag_trace_id, c.trace_id AS closed_trace_id
    FROM twins t
    JOIN judged r ON r.run_id = t.rag_run
    JOIN judged c ON c.run_id = t.closed_run AND c.case_id = r.case_id
)
SELECT
    p.run_id,
    p.closed_run,
    p.case_id,
    g.category,
    g.risk,
    g.expected_behavior,
    g.answerable,
    coalesce(g.raw->>'reliance',
             CASE WHEN list_contains(string_split(coalesce($strong_categories, ''), ','), g.category)
                  THEN 'strong' ELSE 'supplementary' END) AS reliance,
    CASE
        WHEN p.rag_right IS NULL OR p.closed_right IS NULL THEN 'unknown'
        WHEN p.rag_right AND NOT p.closed_right THEN 'helped'
        WHEN NOT p.rag_right AND p.closed_right THEN 'hurt'
        WHEN p.rag_right AND p.closed_right THEN 'parametric'
        ELSE 'neither'
    END AS outcome,
    coalesce(p.rag_right AND p.closed_right AND reliance = 'strong', false) AS flagged,
    p.rag_right,
    p.closed_right,
    p.rag_root_cause,
    p.rag_trace_id,
    p.closed_trace_id
FROM paired p
JOIN gold_cases g ON g.case_id = p.case_id
ORDER BY p.run_id, p.closed_run,
    array_position(['hurt', 'helped', 'parametric', 'neither', 'unknown'], outcome), p.case_id
