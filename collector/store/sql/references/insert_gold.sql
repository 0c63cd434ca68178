-- name: insert_gold
-- description: Insert the gold cases registered as _gold (drop_gold deleted the stored ones first).
-- params: none
-- returns: nothing
INSERT INTO gold_cases (case_id, query, query_norm, answerable, expected_behavior, category, risk,
                        must_retrieve, evidence, required_facts, negative_doc_ids, user_scope,
                        as_of, notes, dataset, loaded_at, raw)
SELECT case_id, query, query_norm, answerable, expected_behavior, category, risk, must_retrieve, evidence,
       required_facts, negative_doc_ids, user_scope, as_of, notes, dataset, loaded_at, raw
FROM _gold
