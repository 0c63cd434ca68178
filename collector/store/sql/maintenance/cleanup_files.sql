-- name: cleanup_files
-- description: Delete the data files no snapshot kept for $keep seconds reads any more; how many were.
-- params: $keep DOUBLE
-- returns: count
SELECT count(*) FROM ducklake_cleanup_old_files('lake', older_than => now() - to_seconds($keep))
