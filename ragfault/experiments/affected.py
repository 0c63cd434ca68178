"""A document changed: what must be re-run (docs/architecture.md, Experiments).

Every reload of the knowledge base records the documents whose content, version or validity it
changed (``kb_changes``, written by ``store_kb``). The bundled ``kb_affected`` query lists, for each
changed document, the gold cases whose evidence names it or whose latest trace retrieved it, and
whether that trace was answered before the change (its verdicts predate it)."""

from __future__ import annotations

from typing import Any

from collector.store.references import changes_since
from queries import load_query
from ragfault.compare import QueryFn, rows_of


def case_rows(run: QueryFn, run_id: str | None = None, since: str | None = None) -> list[dict[str, Any]]:
    q = load_query("kb_affected")
    return rows_of(run(q.sql, q.bind({"run_id": run_id, "since": since})))


def changes(run: QueryFn, run_id: str | None = None, since: str | None = None) -> dict[str, Any]:
    """The changes, and the cases each affects (``predates_change``: re-run them)."""
    rows = case_rows(run, run_id, since)
    waiting = sorted({r["case_id"] for r in rows if r["predates_change"]})
    return {
        "changes": changes_since(run, since),
        "affected": rows,
        "affected_not_rerun": waiting,
    }
