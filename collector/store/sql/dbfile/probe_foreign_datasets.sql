-- name: probe_foreign_datasets
-- description: Up to three datasets of the probe file's gold cases other than $allowed (the demo's), NULL
--   shown as '(none)': a demo database that holds them is not the demo's alone.
-- params: $allowed VARCHAR[]
-- returns: dataset
SELECT DISTINCT coalesce(dataset, '(none)') AS dataset
FROM probe.gold_cases
WHERE dataset IS NULL OR NOT list_contains($allowed, dataset)
LIMIT 3
