"""The no-retrieval baseline: a run against its closed-book twin, case by case.

A run whose traces carry ``ragfault.baseline_of = R`` (or marked so through the API) answered the
gold cases of run R with retrieval switched off. The bundled ``closed_book`` query pairs them and
names each case's outcome: ``helped``, ``hurt``, ``parametric``, ``neither`` (or ``unknown``); this
module sums them up for the report and the gates."""

from __future__ import annotations

from typing import Any

from queries import load_query
from ragfault.compare import QueryFn, rows_of

OUTCOMES = ("helped", "hurt", "parametric", "neither", "unknown")


def pairs(
    run: QueryFn, run_id: str | None = None, *, strong_categories: str | None = None
) -> list[dict[str, Any]]:
    q = load_query("closed_book")
    given: dict[str, Any] = {"run_id": run_id}
    if strong_categories is not None:
        given["strong_categories"] = strong_categories
    return rows_of(run(q.sql, q.bind(given)))


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Per (run, closed-book run): the count of each outcome, the known pairs, the parametric share
    (parametric / pairs with a known outcome) and the flagged cases (strong reliance, parametric)."""
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for r in rows:
        s = out.setdefault((r["run_id"], r["closed_run"]), {
            "run_id": r["run_id"], "closed_run": r["closed_run"], **dict.fromkeys(OUTCOMES, 0), "flagged": [],
        })  # fmt: skip
        s[r["outcome"]] += 1
        if r["flagged"]:
            s["flagged"].append(r["case_id"])
    for s in out.values():
        known = sum(s[o] for o in OUTCOMES if o != "unknown")
        s["paired"] = known
        s["parametric_share"] = s["parametric"] / known if known else None
    return {"twins": list(out.values())}
