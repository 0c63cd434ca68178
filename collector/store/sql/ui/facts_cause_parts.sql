-- name: facts_cause_parts
-- description: The traces of the facts' attribution rows (registered as _ui_rows) counted per run,
--   dataset (of the gold case), hour of the start, root cause and quadrant cell: what the dashboard's
--   root causes, quadrant and trend add up instead of the rows themselves.
-- grain: one row per run_id, dataset, hour, root_cause, retrieval and generation
-- params: none
-- returns: run_id, dataset, hour, root_cause, retrieval, generation, traces
SELECT a.run_id, g.dataset, a.hour, a.root_cause, a.retrieval, a.generation, count(*) AS traces
FROM _ui_rows a
LEFT JOIN gold_cases g ON g.case_id = a.case_id
GROUP BY a.run_id, g.dataset, a.hour, a.root_cause, a.retrieval, a.generation
