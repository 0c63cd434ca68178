"""What the experiments API writes: marks on runs (``sql/experiments/*.sql``)."""

from __future__ import annotations

from collector.store.base import Tx
from collector.store.sqlfiles import sql


def mark_run(con: Tx, run_id: str, run_group: str | None, baseline_of: str | None) -> None:
    """Mark a run as a repeat of a configuration (``run_group``) or the closed-book twin of a run."""
    con.execute(sql("experiments", "mark_run"), [run_id, run_group, baseline_of])
