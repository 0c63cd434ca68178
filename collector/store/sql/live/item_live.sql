-- name: item_live
-- description: A triage screen's suspected cause: the trace's live_attribution row (cause, layers,
--   evidence), if live attribution names one.
-- params: $t VARCHAR
-- returns: every column of live_attribution
SELECT * FROM live_attribution WHERE trace_id = $t
