-- Migration 028: the facts of the traces a write changed are computed in batches.
--
-- Migration 027 kept each trace's facts as rows, computed again in the transaction that wrote its
-- verdicts or its assembly. Each computation runs the bundled statements, some milliseconds each
-- whatever the number of traces, so a small write paid as much as a large one. A write now names the
-- traces it changed in `facts_changed`, with the least time their verdicts and their rows were written
-- since; the facts views give the kept facts of the other traces and compute those of the changed ones
-- when read, and a write that leaves enough of them, or ones old enough, computes them all and empties
-- the table (`collector/store/file/facts.py`).

CREATE TABLE facts_changed (
    trace_id       VARCHAR NOT NULL,
    since          TIMESTAMP NOT NULL,
    received_since TIMESTAMP NOT NULL
);
