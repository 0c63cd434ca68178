-- name: flush_inlined
-- description: Write the rows of small commits that DuckLake kept in the catalog itself (its
--   inlining) out as data files; how many were (lake: the lake's name as it is attached, lake.LAKE).
-- params: none
-- returns: count
SELECT count(*) FROM ducklake_flush_inlined_data('lake')
