-- Migration 010: what experiments need beyond the traces.
--
-- marked_runs: runs marked through the API as repeats of one configuration (run_group) or as the
-- closed-book twin of another run (baseline_of). Marks sent on the traces themselves
-- (ragfault.run_group, ragfault.baseline_of) stay in the spans' attributes; the run_marks view
-- reads both, and a mark set here wins.
CREATE TABLE IF NOT EXISTS marked_runs (
    run_id      VARCHAR PRIMARY KEY,
    run_group   VARCHAR,
    baseline_of VARCHAR,
    marked_at   TIMESTAMP
);

-- kb_changes: one row each time a load changed a document already in the registry (its content,
-- version or validity), or added one that was not there. Verdicts of traces evaluated before
-- changed_at predate the change.
CREATE TABLE IF NOT EXISTS kb_changes (
    doc_id          VARCHAR NOT NULL,
    change          VARCHAR NOT NULL,  -- added, content, version, validity (comma-separated when several)
    old_version     VARCHAR,
    new_version     VARCHAR,
    changed_at      TIMESTAMP NOT NULL
);
