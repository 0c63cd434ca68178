-- name: data_files
-- description: The data files of the current snapshot of the lake's table $table.
-- params: $table VARCHAR
-- returns: count
SELECT count(*) FROM ducklake_list_files('lake', $table)
