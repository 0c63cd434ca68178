-- name: traces_count
-- description: How many traces of the trace list match the filters; {where} holds the conditions of the
--   filters given (collector.store.ui.TRACE_FILTERS), so no filter left out costs a scan or a join.
-- params: $service VARCHAR = NULL, $run_id VARCHAR = NULL, $since VARCHAR = NULL, $until VARCHAR = NULL,
--   $q VARCHAR = NULL, $q_re VARCHAR = NULL, $feedback BOOLEAN = NULL, $root_cause VARCHAR = NULL
-- returns: count
SELECT count(*) FROM traces t WHERE true {where}
