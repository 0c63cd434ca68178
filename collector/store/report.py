"""The reads of ``ragfault report`` (and of the demo's summary) that are not bundled queries: the case
section, the runs and datasets a filter may name, and each case's root cause in a run. Statements in
``sql/report/``; each runs through a ``QueryFn`` (the server's SQL API or a file opened read-only),
as the report's bundled queries do, so a report reads the same on both."""

from __future__ import annotations

from typing import Any

from collector.store.base import QueryFn
from collector.store.sqlfiles import sql

AREA = "report"


def cases(
    run: QueryFn, run_id: str | None, dataset: str | None, since: str | None, until: str | None
) -> dict[str, Any]:
    """Root cause and failing layers per evaluated case (filters may be None; bounds as ISO text),
    in the root causes' order: the query function's answer, columns and rows."""
    params = {"run_id": run_id, "dataset": dataset, "since": since, "until": until}
    return run(sql(AREA, "cases"), params)


def runs(run: QueryFn) -> dict[str, int]:
    """Every run id traces carry, with its trace count, the most recently received first."""
    return {str(r[0]): int(r[1]) for r in run(sql(AREA, "runs"), {})["rows"]}


def datasets(run: QueryFn) -> dict[str, int]:
    """Every dataset of the gold cases, with its case count, the most recently loaded first."""
    return {str(r[0]): int(r[1]) for r in run(sql(AREA, "datasets"), {})["rows"]}


def case_causes(run: QueryFn, run_id: str) -> dict[str, Any]:
    """The root cause attribution finds for each gold case of a run, by case id."""
    return {r[0]: r[1] for r in run(sql(AREA, "case_causes"), {"run_id": run_id})["rows"]}
