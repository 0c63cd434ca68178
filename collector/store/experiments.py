"""What the experiments API writes: marks on runs (``sql/experiments/*.sql``)."""

from __future__ import annotations

from collector.store.base import Con
from collector.store.sqlfiles import sql
from collector.store.tx import transaction


def mark_run(con: Con, run_id: str, run_group: str | None, baseline_of: str | None) -> None:
    """Mark a run as a repeat of a configuration (``run_group``) or the closed-book twin of a run; a
    run marked again keeps the new mark (one transaction, plain DELETE and INSERT on both backends)."""
    with transaction(con):
        con.execute(sql("experiments", "drop_mark"), [run_id])
        con.execute(sql("experiments", "mark_run"), [run_id, run_group, baseline_of])
