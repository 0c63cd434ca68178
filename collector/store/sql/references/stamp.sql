-- name: stamp
-- description: What changes when gold cases or knowledge-base documents are (re)loaded: their counts
--   and latest load times (the evaluators reload their references when it differs).
-- params: none
-- returns: cases, cases_loaded_at, documents, documents_loaded_at
SELECT (SELECT count(*) FROM gold_cases), (SELECT max(loaded_at) FROM gold_cases),
       (SELECT count(*) FROM kb_documents), (SELECT max(loaded_at) FROM kb_documents)
