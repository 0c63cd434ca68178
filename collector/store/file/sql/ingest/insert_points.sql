-- name: insert_points
-- description: The metric data points of a batch (registered as _in_points) not stored yet, the first
--   copy of a point repeated in the batch. {columns} is collector.receivers.signals.POINT_COLUMNS.
-- params: none
-- returns: point_id of each point written
INSERT OR IGNORE INTO metric_points ({columns}) SELECT DISTINCT ON (point_id) {columns} FROM _in_points
RETURNING point_id
