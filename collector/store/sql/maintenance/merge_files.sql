-- name: merge_files
-- description: Merge the lake's adjacent small data files into larger ones.
-- params: none
-- returns: nothing
CALL ducklake_merge_adjacent_files('lake')
