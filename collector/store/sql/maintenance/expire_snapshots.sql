-- name: expire_snapshots
-- description: Expire the lake's snapshots older than $keep seconds; how many were (counted in SQL:
--   their rows hold time zones, which Python would need pytz to convert).
-- params: $keep DOUBLE
-- returns: count
SELECT count(*) FROM ducklake_expire_snapshots('lake', older_than => now() - to_seconds($keep))
