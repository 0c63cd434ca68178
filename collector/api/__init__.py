"""The collector's HTTP surface: the app, its guard and routes, and what it serves beyond ingest
(export, coverage, the doctor's reads)."""
