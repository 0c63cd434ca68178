-- name: kb_affected
-- description: What a knowledge-base change makes stale: for every document a reload changed (its
--   content, version or validity; kb_changes), the gold cases whose evidence names it or whose latest
--   trace retrieved it, and whether that trace predates the change (answered before it: its verdicts
--   no longer describe the knowledge base as it is; re-run the case). When a document changed several
--   times, its latest change counts.
-- grain: one row per (changed document, case)
-- params: $run_id VARCHAR = NULL, $since TIMESTAMP = NULL
-- returns: case_id, run_id, category, risk, expected_behavior, answerable, doc_id, change, changed_at,
--   why (evidence, retrieved, or both), trace_id, answered_at, evaluated_at, predates_change, rerun
WITH changes AS (
    SELECT doc_id, arg_max(change, changed_at) AS change, max(changed_at) AS changed_at
    FROM kb_changes
    WHERE $since IS NULL OR changed_at >= CAST($since AS TIMESTAMP)
    GROUP BY doc_id
),
latest AS (
    SELECT a.case_id, a.run_id, a.trace_id, t.first_received_at AS answered_at, t.evaluated_at
    -- the traces attribution covers (those with a gold case's verdict), read without computing attribution
    FROM (SELECT trace_id, any_value(case_id) AS case_id, any_value(run_id) AS run_id
          FROM evaluations
          WHERE case_id IS NOT NULL AND status IN ('ok', 'not_applicable')
          GROUP BY trace_id) a
    JOIN traces t ON t.trace_id = a.trace_id
    WHERE $run_id IS NULL OR a.run_id = $run_id
    QUALIFY row_number() OVER (PARTITION BY a.case_id ORDER BY t.first_received_at DESC NULLS LAST, a.trace_id) = 1
),
named AS (
    SELECT DISTINCT g.case_id, d.doc_id
    FROM gold_cases g,
         unnest(list_concat(
             coalesce(CAST(json_extract_string(g.evidence, '$[*].doc_id') AS VARCHAR[]), []),
             coalesce(CAST(json_extract_string(g.evidence, '$[*].any_of[*].doc_id') AS VARCHAR[]), [])
         )) AS d(doc_id)
    WHERE d.doc_id IS NOT NULL
),
retrieved AS (
    SELECT DISTINCT l.case_id, sd.doc_id
    FROM latest l
    JOIN step_documents sd ON sd.trace_id = l.trace_id
    WHERE sd.doc_id IN (SELECT doc_id FROM changes)
),
hits AS (
    SELECT case_id, doc_id, string_agg(why, ', ' ORDER BY why) AS why
    FROM (SELECT case_id, doc_id, 'evidence' AS why FROM named WHERE doc_id IN (SELECT doc_id FROM changes)
          UNION ALL SELECT case_id, doc_id, 'retrieved' FROM retrieved)
    GROUP BY case_id, doc_id
)
SELECT
    h.case_id,
    l.run_id,
    g.category,
    g.risk,
    g.expected_behavior,
    g.answerable,
    h.doc_id,
    c.change,
    c.changed_at,
    h.why,
    l.trace_id,
    l.answered_at,
    l.evaluated_at,
    coalesce(l.answered_at < c.changed_at, true) AS predates_change,
    NOT coalesce(l.answered_at < c.changed_at, true) AS rerun
FROM hits h
JOIN changes c ON c.doc_id = h.doc_id
JOIN gold_cases g ON g.case_id = h.case_id
LEFT JOIN latest l ON l.case_id = h.case_id
WHERE $run_id IS NULL OR l.run_id IS NOT NULL
ORDER BY rerun, c.changed_at DESC, h.doc_id, h.case_id
