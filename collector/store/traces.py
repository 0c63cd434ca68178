"""One trace as the API gives it (``GET /api/v1/traces/{id}``): its row, its steps and their
documents, each a bounded read on the caller's cursor (statements in ``sql/traces/``); and the
probe and setting of DuckDB's worker threads that the SQL API lowers while a user's query runs
(``collector.api.routes``)."""

from __future__ import annotations

from typing import Any

from collector.store.base import Con
from collector.store.reader import run_select
from collector.store.sqlfiles import sql

AREA = "traces"
MAX_ROWS = 100_000


def trace_detail(con: Con, trace_id: str) -> dict[str, Any]:
    """``{"trace", "steps", "documents"}``, each ``{"columns", "rows", ...}`` (``run_select``'s)."""
    params = {"t": trace_id}
    return {
        name: run_select(con, sql(AREA, statement), params, row_cap=MAX_ROWS).as_dict()
        for name, statement in (
            ("trace", "trace_row"),
            ("steps", "trace_steps"),
            ("documents", "trace_documents"),
        )
    }


def threads_and_major(con: Con) -> tuple[int, int]:
    """(DuckDB's worker threads now, DuckDB's major version); the result is read whole (a result
    left unread keeps its transaction open, and DuckDB then refuses checkpoints)."""
    rows = con.execute("SELECT current_setting('threads'), version()").fetchall()
    if not rows:
        return 1, 0
    threads, version = rows[0]
    return int(threads), int(str(version).lstrip("v").split(".")[0])


def set_threads(con: Con, n: int) -> None:
    """DuckDB's worker threads, for the whole instance (``SET`` takes no parameter: ``n`` is an int)."""
    con.execute(f"SET threads = {int(n)}")
