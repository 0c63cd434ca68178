-- name: ui_overview
-- description: What the database holds, for the first-run page and the header: stored traces, evaluated
--   traces, gold cases, knowledge-base documents, human labels and the newest trace's start.
-- grain: one row
-- params: none
-- returns: traces, evaluated, gold_cases, kb_documents, human_labels, services, newest
SELECT
    (SELECT count(*) FROM traces) AS traces,
    (SELECT count(*) FROM traces WHERE evaluated_at IS NOT NULL) AS evaluated,
    (SELECT count(*) FROM gold_cases) AS gold_cases,
    (SELECT count(*) FROM kb_documents) AS kb_documents,
    (SELECT count(*) FROM human_labels) AS human_labels,
    (SELECT list(DISTINCT service_name ORDER BY service_name) FROM traces WHERE service_name IS NOT NULL) AS services,
    (SELECT max(start_time) FROM traces) AS newest
