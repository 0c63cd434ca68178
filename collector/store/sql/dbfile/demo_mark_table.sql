-- name: demo_mark_table
-- description: The table that marks a file made by `ragfault demo` (in the attached made file): a later
--   `demo --force` replaces only a file that has it.
-- params: none
-- returns: nothing
CREATE TABLE made.ragfault_demo (made_at TIMESTAMP, note VARCHAR)
