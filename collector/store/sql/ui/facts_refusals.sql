-- name: facts_refusals
-- description: The cells queries/refusal_table.sql counts: {cells} is that query's own cells (one row per
--   answerability verdict with its category, cell, whether every required fact was stated, and what
--   the query filters on: run, dataset); the dashboard runs the rest of that query over these rows
--   (collector.store.ui_facts.refusal_table_sql), so the cross-table has one definition.
--   {ids}: only the traces registered as _ui_ids, or empty.
-- grain: one row per answerability verdict with status ok (times its trace-level fact_coverage rows)
-- params: none
-- returns: trace_id, run_id, dataset, category, cell, all_facts
{cells}
  {ids}
