"""``ragfault report``: the attribution breakdown, layered metrics with their denominators, the
refusal table and slices by category, as terminal tables, Markdown or JSON.

Every section is one bundled query (``queries/``) run through a ``QueryFn`` — the server's SQL API
or the file opened read-only — so the report shows exactly what a user gets from ``ragfault query``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson

from collector.store import report as store_report
from queries import load_query
from ragfault.output import table

QueryFn = Callable[[str, dict[str, Any]], dict[str, Any]]

SECTIONS = (
    ("root_causes", "Root causes", "Each evaluated trace with a gold case, by its first failing layer."),
    ("cases", "Cases", "Root cause and every failing layer per trace."),
    (
        "layer_metrics",
        "Layered metrics",
        "Macro: mean over traces where the metric applies (n_traces); micro: sum of numerators / sum of denominators.",
    ),
    (
        "refusal_table",
        "Refusals",
        "Answerable x answered/refused; rates are NULL when their denominator is 0.",
    ),
    ("quadrant", "Retrieval x generation", "Retrieval good: all evidence reached the context."),
    ("online_health", "Live traffic (no gold case)", "Reference-free signals by hour and service."),
)


def build(
    run: QueryFn,
    *,
    run_id: str | None = None,
    dataset: str | None = None,
    since: str | None = None,
    until: str | None = None,
    strong_categories: str | None = None,
) -> dict[str, Any]:
    """Run every section; returns {section: {title, note, columns, rows}} (``strong_categories``:
    the categories of strong reliance, ``[experiments] reliance``)."""
    filters = {"run_id": run_id, "dataset": dataset, "since": since, "until": until}
    out: dict[str, Any] = {"filters": {k: v for k, v in filters.items() if v is not None}, "sections": {}}
    for key, title, note in SECTIONS:
        if key == "cases":
            result = store_report.cases(run, run_id, dataset, since, until)
        elif key == "online_health":
            q = load_query(key)
            result = run(q.sql, q.bind({"since": since, "until": until}))
        else:
            q = load_query(key)
            result = run(q.sql, q.bind(filters))
        if key == "layer_metrics":
            result = _only(result, "category", "(all)")
        out["sections"][key] = {
            "title": title,
            "note": note,
            "columns": result["columns"],
            "rows": result["rows"],
        }
    by_cat = load_query("layer_metrics")
    cat = run(by_cat.sql, by_cat.bind(filters))
    cat = _drop(cat, "category", "(all)")
    out["sections"]["by_category"] = {
        "title": "Slices by category",
        "note": "Micro value (numerator/denominator) per gold-case category; '-' where no case applies.",
        **_pivot(cat),
    }
    from ragfault.experiments.report import sections as experiment_sections

    out["sections"].update(experiment_sections(run, run_id, strong_categories))
    return out


def check_filters(run: QueryFn, *, run_id: str | None = None, dataset: str | None = None) -> None:
    """Refuse a run or dataset nothing is stored under (a mistyped name would print empty tables as
    if it were a run that did nothing), naming the ones there are."""
    from ragfault_core.errors import ConfigError

    for value, what, names in (
        (run_id, "run", store_report.runs),
        (dataset, "dataset", store_report.datasets),
    ):
        if value is None:
            continue
        found = names(run)
        if value in found:
            continue
        unit = "traces" if what == "run" else "gold cases"
        listed = ", ".join(f"{k} ({n})" for k, n in list(found.items())[:20])
        more = f" and {len(found) - 20} more" if len(found) > 20 else ""
        there = f"the {what}s stored: {listed}{more}" if found else f"no {unit} name a {what}"
        flag = "--run" if what == "run" else "--dataset"
        raise ConfigError(f"no {unit} of {what} {value!r} ({there}); pass {flag} one of those")


SLICE_METRICS = (
    "candidate_recall",
    "recall@5",
    "context_recall",
    "context_retention",
    "answer_support",
    "fact_coverage",
)


def _pivot(result: dict[str, Any]) -> dict[str, Any]:
    """layer_metrics rows -> one row per category with 'value (num/den)' cells."""
    cols = result["columns"]
    ci, mi = cols.index("category"), cols.index("metric")
    vi, ni, di = cols.index("micro"), cols.index("numerator"), cols.index("denominator")
    cells: dict[str, dict[str, str]] = {}
    for r in result["rows"]:
        if r[mi] not in SLICE_METRICS:
            continue
        cell = "-" if r[di] in (None, 0) else f"{r[vi]:.2f} ({r[ni]:g}/{r[di]:g})"
        cells.setdefault(r[ci], {})[r[mi]] = cell
    rows = [[cat, *(m.get(k, "-") for k in SLICE_METRICS)] for cat, m in sorted(cells.items())]
    return {"columns": ["category", *SLICE_METRICS], "rows": rows}


def _only(result: dict[str, Any], col: str, value: Any) -> dict[str, Any]:
    i = result["columns"].index(col)
    return {"columns": result["columns"], "rows": [r for r in result["rows"] if r[i] == value]}


def _drop(result: dict[str, Any], col: str, value: Any) -> dict[str, Any]:
    i = result["columns"].index(col)
    return {"columns": result["columns"], "rows": [r for r in result["rows"] if r[i] != value]}


def _fmt(v: Any) -> Any:
    if isinstance(v, float):
        return round(v, 3)
    return v


def render(report: dict[str, Any], fmt: str = "text") -> str:
    if fmt == "json":
        return orjson.dumps(report, option=orjson.OPT_INDENT_2).decode()
    parts = []
    md = fmt == "markdown"
    if md:
        parts.append("# ragfault report")
        if report["filters"]:
            parts.append("Filters: " + ", ".join(f"{k} = `{v}`" for k, v in report["filters"].items()))
    for sec in report["sections"].values():
        rows = [[_fmt(v) for v in r] for r in sec["rows"]]
        if md:
            parts.append(f"## {sec['title']}\n\n{sec['note']}\n")
            if not rows:
                parts.append("_(none)_")
                continue
            parts.append("| " + " | ".join(sec["columns"]) + " |")
            parts.append("|" + "---|" * len(sec["columns"]))
            for r in rows:
                parts.append("| " + " | ".join("" if v is None else str(v) for v in r) + " |")
            parts.append("")
        else:
            parts.append(f"== {sec['title']} ==  ({sec['note']})")
            parts.append(table(sec["columns"], rows) if rows else "(none)")
            parts.append("")
    return "\n".join(parts).rstrip() + "\n"
