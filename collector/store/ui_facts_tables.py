"""The dashboard's facts as tables: what each holds, the statements that compute them (all of them, or
those of some traces from those traces' own verdicts), their hourly sums, and rows replaced in them
without a copy. ``ui_facts.DashboardFacts`` keeps them up to date; ``ui_facts_saved`` keeps them on disk.

Three tables keyed by trace, and two of hourly sums:

- ``attribution``: the attribution view's row of each evaluated trace with a gold case (without
  ``evidence``, ``answer_text`` and ``missing_fields``, which the dashboard never reads), with the
  hour of its start and its quadrant cell; the case table, run comparison and the trace list's root
  causes read it in place of the view;
- ``_ui_layers``: the verdict rows ``queries/layer_metrics.sql`` aggregates, each with its category,
  run, dataset and start time (``sql/ui/facts_layers.sql``);
- ``_ui_refusals``: the cells ``queries/refusal_table.sql`` counts, as its own ``cells`` define them;
  the dashboard runs the rest of that query over them (``refusal_table_sql``);
- ``_ui_layer_parts`` and ``_ui_cause_parts``: ``_ui_layers`` and ``attribution`` summed per hour of
  the traces' start (and run, dataset, category and metric; or root cause and quadrant cell).

The dashboard's own statements (``sql/ui/dash_*.sql``) add up the hourly sums of the hours wholly
inside the time filter and the rows of the hours it cuts, with the bundled queries' definitions (the
refusal table is the bundled query itself); ``tests/ui/test_facts.py`` checks they give the same
numbers on the same database.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import date, datetime
from functools import cache
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from collector.store.base import Con, arrow_rows, operation
from collector.store.sqlfiles import sql
from collector.store.templates import fill, filled
from collector.store.verdicts import ids_table, registered
from queries import load_query

TABLES = {"attribution": "facts_attribution", "_ui_layers": "facts_layers", "_ui_refusals": "facts_refusals"}
"""The facts' tables as the dashboard's statements name them -> the statement that computes them."""

PARTS = {
    "_ui_layer_parts": ("_ui_layers", "facts_layer_parts"),
    "_ui_cause_parts": ("attribution", "facts_cause_parts"),
}
"""Hourly sums of a table of the facts -> (that table, the statement that sums it): the dashboard adds
up these (a few thousand rows) instead of a row a trace (attribution: root causes, quadrant, trend) or
~9 a trace (``_ui_layers``: the layered metrics); a refresh sums again only the hours the changed
traces' rows were in or are in now."""

_IDS = "AND e.trace_id IN (SELECT trace_id FROM _ui_ids)"

# columns of few distinct values, held dictionary-encoded (the verdict rows are ~9 a trace: a run id,
# a category and a metric name each as a string would be most of their memory)
_DICTIONARY = {
    "run_id",
    "dataset",
    "category",
    "metric",
    "status",
    "cell",
    "root_cause",
    "risk",
    "service_name",
}
_MAX_CHUNKS = 32  # partial refreshes append a chunk each; past this many they are merged into one


def encoded(table: pa.Table) -> pa.Table:
    for i, f in enumerate(table.schema):
        if f.name in _DICTIONARY and pa.types.is_string(f.type):
            table = table.set_column(i, f.name, pc.dictionary_encode(table.column(i)))
    return table


def _cte(text: str, name: str) -> tuple[int, int]:
    """Where the body of ``WITH <name> AS (...)`` starts and ends in ``text`` (brackets in string
    literals and ``--`` comments are skipped)."""
    start = text.index(f"WITH {name} AS (") + len(f"WITH {name} AS (")
    depth, i = 1, start
    while depth:
        ch = text[i]
        if ch == "'":
            i = text.index("'", i + 1)
        elif text.startswith("--", i):
            i = text.index("\n", i)
        else:
            depth += {"(": 1, ")": -1}.get(ch, 0)
        i += 1
    return start, i - 1


@cache
def refusal_parts() -> tuple[str, str]:
    """``queries/refusal_table.sql`` in two: its ``cells`` (each trace's cell, unfiltered: what the facts
    keep, ``facts_refusals``) and the rest of it with ``{cells}`` in their place (what the dashboard
    runs over the facts' rows)."""
    text = load_query("refusal_table").sql
    start, end = _cte(text, "cells")
    return text[start:end].strip(), text[:start] + "{cells}" + text[end:]


def refusal_table_sql() -> str:
    """The refusal table over the facts' cells (``_ui_refusals``): the bundled query, its cells read
    from the facts."""
    return fill(refusal_parts()[1], cells="SELECT * FROM _ui_refusals")


def _statement(name: str, ids: str) -> str:
    """The statement that computes the facts' table ``name``, of the traces in ``_ui_ids`` (``ids``) or
    of all (``ids`` empty)."""
    if name == "_ui_refusals":
        return filled("ui", TABLES[name], cells=refusal_parts()[0], ids=ids)
    return filled("ui", TABLES[name], ids=ids)


def version(con: Con) -> tuple[Any, ...]:
    """Counts and newest times of what the facts are computed from: it moves with every write. Times
    are ISO strings, so a version saved as JSON compares equal to the one read again."""
    row = con.execute(sql("ui", "version")).fetchall()[0]
    return tuple(v.isoformat() if isinstance(v, datetime | date) else v for v in row)


def form(con: Con) -> str:
    """What the facts' shape depends on: the text of every statement that computes them and the
    attribution view's definition on this database (a hash; saved facts of another form are not used)."""
    names = ["version", "facts_stamps", *TABLES.values(), *(stmt for _, stmt in PARTS.values())]
    view = con.execute(sql("ui", "facts_view_definition")).fetchall()
    text = "\n".join([*(sql("ui", n) for n in names), *refusal_parts(), *(str(r[0]) for r in view)])
    return hashlib.sha256(text.encode()).hexdigest()[:32]


@dataclass(frozen=True)
class Facts:
    """The facts' tables and the stamps of the traces they were computed from."""

    stamps: pa.Table
    tables: dict[str, pa.Table]

    @property
    def traces(self) -> int:
        return int(self.tables["attribution"].num_rows)


def compute(
    con: Con,
    ids: list[str] | None = None,
    evaluations: pa.Table | None = None,
    names: tuple[str, ...] = tuple(TABLES),
) -> dict[str, pa.Table]:
    """The tables ``names`` for every evaluated trace (``ids`` None) or for the traces ``ids``, whose
    verdicts (``evaluations``) the statements read in place of the table."""
    if ids is None:
        return {name: encoded(con.sql(_statement(name, "")).to_arrow_table()) for name in names}
    assert evaluations is not None
    with registered(con, {"evaluations": evaluations, "_ui_ids": ids_table(ids)}):
        # the id filter keeps the result right even if a backend resolved the view's table elsewhere
        return {name: encoded(con.sql(_statement(name, _IDS)).to_arrow_table()) for name in names}


def hourly(con: Con, stmt: str, rows: pa.Table, hours: pa.Array | None = None) -> pa.Table:
    """The hourly sums ``stmt`` makes of ``rows`` (registered as ``_ui_rows``), of every hour or of
    ``hours`` only."""
    if hours is not None:
        rows = rows.filter(pc.is_in(rows.column("hour"), value_set=hours, skip_nulls=False))
    with registered(con, {"_ui_rows": rows}):
        return encoded(con.sql(sql("ui", stmt)).to_arrow_table())


def replace_hours(old: pa.Table, hours: pa.Array, new: pa.Table) -> pa.Table:
    kept = old.filter(pc.invert(pc.is_in(old.column("hour"), value_set=hours, skip_nulls=False)))
    if new.schema != old.schema:
        new = new.cast(old.schema)
    return pa.concat_tables([kept, new]).combine_chunks()


def _without(table: pa.Table, drop: pa.Array) -> pa.Table:
    """``table`` without the rows where ``drop`` is true: the runs of rows between them as slices of
    ``table`` (no copy; a filter copied every column of every row kept: 220 ms for the ~900,000 verdict
    rows of 100,000 traces, to drop a few thousand)."""
    at = pc.indices_nonzero(drop).to_pylist()
    if not at:
        return table
    runs, start = [], 0
    for i in at:
        if i > start:
            runs.append(table.slice(start, i - start))
        start = i + 1
    if start < table.num_rows:
        runs.append(table.slice(start))
    return pa.concat_tables(runs) if runs else table.slice(0, 0)


def replace_rows(old: pa.Table, gone: pa.Array, new: pa.Table) -> pa.Table:
    out = _without(old, pc.is_in(old.column("trace_id"), value_set=gone))
    if new.num_rows:
        out = pa.concat_tables([out, new if new.schema == old.schema else new.cast(old.schema)])
    return out.combine_chunks() if out.num_columns and out.column(0).num_chunks > _MAX_CHUNKS else out


@operation
def root_causes(con: Con, trace_ids: list[str]) -> dict[str, str]:
    """The root cause of each of these traces (those with one), computed from their own verdicts
    alone, read since their ``verdicts_since``: what a page of the trace list shows before the
    dashboard's facts exist."""
    with registered(con, {"_ui_ids": ids_table(trace_ids)}):
        unknown, since = con.execute(sql("ui", "facts_since")).fetchall()[0]
        bound = None if unknown else since
        evaluations = arrow_rows(con, sql("ui", "facts_verdicts"), {"since": bound})
    table = compute(con, trace_ids, evaluations, ("attribution",))["attribution"]
    return dict(
        zip(table.column("trace_id").to_pylist(), table.column("root_cause").to_pylist(), strict=True)
    )
