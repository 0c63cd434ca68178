-- name: insert_points
-- description: The new metric data points of a batch (registered as _in_points, those this collector
--   has not stored lately) into the lake's metric_points, the first copy of a point repeated in the
--   batch. {columns} is collector.receivers.signals.POINT_COLUMNS.
-- params: none
-- returns: nothing
INSERT INTO metric_points ({columns}) SELECT DISTINCT ON (point_id) {columns} FROM _in_points
