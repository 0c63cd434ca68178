-- name: round_cap
-- description: How many traces one round of this instance claims at most (name_claimer).
-- params: none
-- returns: max_traces
SELECT max_traces FROM memory.main.ragfault_claimer
