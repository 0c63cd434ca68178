"""Experiments over stored runs: the HTTP API of run comparison, run marks, the closed-book
baseline, conflict samples and knowledge-base changes."""

from __future__ import annotations

from typing import Any

from ragfault.compare import QueryFn


def experiment_rows(
    run: QueryFn, run_id: str | None, needed: set[str], strong_categories: str | None = None
) -> dict[str, list[dict[str, Any]]]:
    """Rows for the gates' experiment metrics, by kind: ``closed_book`` (pairs with the closed-book
    twin), ``conflicts`` (conflict-sample traces), ``affected`` (cases a KB change affects)."""
    out: dict[str, list[dict[str, Any]]] = {}
    if "closed_book" in needed:
        from . import closed_book

        out["closed_book"] = closed_book.pairs(run, run_id, strong_categories=strong_categories)
    if "conflicts" in needed:
        from . import conflicts

        out["conflicts"] = conflicts.case_rows(run, run_id)
    if "affected" in needed:
        from . import affected

        out["affected"] = affected.case_rows(run, run_id)
    return out
