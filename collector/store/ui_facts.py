"""The dashboard's facts: what its sections aggregate, kept in memory as Arrow tables and brought up
to date by computing again only the traces that changed.

Three tables keyed by trace, and two of hourly sums:

- ``attribution``: the attribution view's row of each evaluated trace with a gold case (without
  ``evidence``, ``answer_text`` and ``missing_fields``, which the dashboard never reads), with the
  hour of its start and its quadrant cell; the case table, run comparison and the trace list's root
  causes read it in place of the view;
- ``_ui_layers``: the verdict rows ``queries/layer_metrics.sql`` aggregates, each with its category,
  run, dataset and start time (``sql/ui/facts_layers.sql``);
- ``_ui_refusals``: the cells ``queries/refusal_table.sql`` counts (``sql/ui/facts_refusals.sql``);
- ``_ui_layer_parts`` and ``_ui_cause_parts``: ``_ui_layers`` and ``attribution`` summed per hour of
  the traces' start (and run, dataset, category and metric; or root cause and quadrant cell).

The dashboard's own statements (``sql/ui/dash_*.sql``) add up the hourly sums of the hours wholly
inside the time filter and the rows of the hours it cuts, with the bundled queries' definitions;
``tests/ui/test_facts.py`` checks they give the same numbers on the same database.

Keeping up: every call reads the data's version (``version``: counts and newest times of the
verdicts, gold cases and settled traces). When it moved, each evaluated trace's stamp
(``sql/ui/facts_stamps.sql``: its evaluation generation, which every write of its verdicts raises in
the same transaction, and when it was evaluated and settled) is compared with the one its facts were
computed from; only the traces whose stamp changed (evaluated again, settled again, new, deleted)
are computed again, from their own verdicts (read since their ``verdicts_since``, so the scan skips
older row groups) registered as ``evaluations`` for the three statements. Everything is computed
again when the gold cases changed (a case's category or dataset is in every row of its traces), when
more than ``FULL_SHARE`` of the traces changed, and when verdicts changed but no stamp did (rows
written around ``write_verdicts``).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from collector.store.base import Tx
from collector.store.sqlfiles import sql
from collector.store.templates import filled
from collector.store.verdicts import ids_table, registered, verdicts_since_sql

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

FULL_SHARE = 0.25
"""Past this share of the evaluated traces changed, computing them all again reads no more than
computing the changed ones (their verdicts are spread over the whole table)."""

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


def _encoded(table: pa.Table) -> pa.Table:
    for i, f in enumerate(table.schema):
        if f.name in _DICTIONARY and pa.types.is_string(f.type):
            table = table.set_column(i, f.name, pc.dictionary_encode(table.column(i)))
    return table


def version(con: Tx) -> tuple[Any, ...]:
    """Counts and newest times of what the facts are computed from: it moves with every write."""
    return tuple(con.execute(sql("ui", "version")).fetchall()[0])


@dataclass(frozen=True)
class Facts:
    """The facts' tables and the stamps of the traces they were computed from."""

    stamps: pa.Table
    tables: dict[str, pa.Table]

    @property
    def traces(self) -> int:
        return int(self.tables["attribution"].num_rows)


@dataclass
class Refreshes:
    """How the facts were kept: full computations, partial ones and the traces those recomputed."""

    full: int = 0
    partial: int = 0
    traces: int = 0
    last: str = ""
    history: list[str] = field(default_factory=list)


def compute(
    con: Tx,
    ids: list[str] | None = None,
    evaluations: pa.Table | None = None,
    names: tuple[str, ...] = tuple(TABLES),
) -> dict[str, pa.Table]:
    """The tables ``names`` for every evaluated trace (``ids`` None) or for the traces ``ids``, whose
    verdicts (``evaluations``) the statements read in place of the table."""
    if ids is None:
        return {
            name: _encoded(con.sql(filled("ui", TABLES[name], ids="")).to_arrow_table()) for name in names
        }
    assert evaluations is not None
    with registered(con, {"evaluations": evaluations, "_ui_ids": ids_table(ids)}):
        # the id filter keeps the result right even if a backend resolved the view's table elsewhere
        return {
            name: _encoded(con.sql(filled("ui", TABLES[name], ids=_IDS)).to_arrow_table()) for name in names
        }


def hourly(con: Tx, stmt: str, rows: pa.Table, hours: pa.Array | None = None) -> pa.Table:
    """The hourly sums ``stmt`` makes of ``rows`` (registered as ``_ui_rows``), of every hour or of
    ``hours`` only."""
    if hours is not None:
        rows = rows.filter(pc.is_in(rows.column("hour"), value_set=hours, skip_nulls=False))
    with registered(con, {"_ui_rows": rows}):
        return _encoded(con.sql(sql("ui", stmt)).to_arrow_table())


def _replace_hours(old: pa.Table, hours: pa.Array, new: pa.Table) -> pa.Table:
    kept = old.filter(pc.invert(pc.is_in(old.column("hour"), value_set=hours, skip_nulls=False)))
    if new.schema != old.schema:
        new = new.cast(old.schema)
    return pa.concat_tables([kept, new]).combine_chunks()


def _replace(old: pa.Table, gone: pa.Array, new: pa.Table) -> pa.Table:
    kept = old.filter(pc.invert(pc.is_in(old.column("trace_id"), value_set=gone)))
    if new.num_rows == 0:
        return kept
    if new.schema != old.schema:
        new = new.cast(old.schema)
    out = pa.concat_tables([kept, new])
    return out.combine_chunks() if out.column(0).num_chunks > _MAX_CHUNKS else out


class DashboardFacts:
    """The facts of one database, computed on first use and kept up to date on each call (thread-safe:
    one refresh at a time, readers share the tables, which are never changed in place)."""

    def __init__(self, full_share: float = FULL_SHARE) -> None:
        self.full_share = full_share
        self.lock = threading.Lock()
        self.key: tuple[Any, ...] | None = None
        self.facts: Facts | None = None
        self.refreshes = Refreshes()

    def current(self, con: Tx, build: bool = True) -> Facts | None:
        """The facts as of now (None when none were computed yet and ``build`` is false)."""
        key = version(con)
        with self.lock:
            if self.facts is not None and key == self.key:
                return self.facts
            if self.facts is None and not build:
                return None
            self.facts = self._refresh(con, key)
            self.key = key
            return self.facts

    def use(self, con: Tx, build: bool = True) -> bool:
        """Make the reads on this cursor see the facts under their names (``attribution`` in place of
        the view); False when there are none yet and ``build`` is false (the view is read then)."""
        facts = self.current(con, build)
        if facts is None:
            return False
        for name, table in facts.tables.items():
            con.register(name, table)
        return True

    def _refresh(self, con: Tx, key: tuple[Any, ...]) -> Facts:
        # the stamps are read before the verdicts they vouch for: a trace evaluated in between has
        # a newer stamp at the next call, never an old stamp on new rows
        stamps = con.sql(sql("ui", "facts_stamps")).to_arrow_table()
        old = self.facts
        if old is None or self.key is None or key[2:4] != self.key[2:4]:
            return self._full(con, stamps, "first" if old is None else "gold cases changed")
        with registered(con, {"_ui_new_stamps": stamps, "_ui_stamps": old.stamps}):
            changed = [r[0] for r in con.execute(sql("ui", "facts_changed")).fetchall()]
        if not changed:
            if key[0:2] != self.key[0:2]:
                return self._full(con, stamps, "verdicts changed without a stamp")
            return Facts(stamps, old.tables)
        if len(changed) > self.full_share * max(stamps.num_rows, 1):
            return self._full(con, stamps, f"{len(changed)} of {stamps.num_rows} traces changed")
        ids = pa.array(changed, pa.string())
        mine = stamps.filter(pc.is_in(stamps.column("trace_id"), value_set=ids))
        since = mine.column("verdicts_since")
        # a trace without verdicts_since may have verdicts anywhere: then every row is read
        bound = None if since.null_count else pc.min(since).as_py()
        where, params = verdicts_since_sql(bound)
        with registered(con, {"_ui_ids": ids_table(changed)}):
            evaluations = con.sql(sql("ui", "facts_verdicts") + where, params=params or None).to_arrow_table()
        new = compute(con, changed, evaluations)
        self.refreshes.partial += 1
        self.refreshes.traces += len(changed)
        self._note(f"{len(changed)} traces recomputed")
        tables = {name: _replace(old.tables[name], ids, new[name]) for name in TABLES}
        for name, (source, stmt) in PARTS.items():
            # the hours these traces' rows were in, or are in now, summed again
            rows = old.tables[source]
            hours = pa.concat_arrays(
                [
                    rows.filter(pc.is_in(rows.column("trace_id"), value_set=ids))
                    .column("hour")
                    .combine_chunks(),
                    new[source].column("hour").combine_chunks(),
                ]
            ).unique()
            tables[name] = _replace_hours(old.tables[name], hours, hourly(con, stmt, tables[source], hours))
        return Facts(stamps, tables)

    def _full(self, con: Tx, stamps: pa.Table, why: str) -> Facts:
        tables = compute(con)
        for name, (source, stmt) in PARTS.items():
            tables[name] = hourly(con, stmt, tables[source])
        self.refreshes.full += 1
        self._note(f"all computed ({why})")
        return Facts(stamps, tables)

    def _note(self, what: str) -> None:
        self.refreshes.last = what
        self.refreshes.history = [*self.refreshes.history[-19:], what]


def root_causes(con: Tx, trace_ids: list[str]) -> dict[str, str]:
    """The root cause of each of these traces (those with one), computed from their own verdicts
    alone, read since their ``verdicts_since``: what a page of the trace list shows before the
    dashboard's facts exist."""
    with registered(con, {"_ui_ids": ids_table(trace_ids)}):
        unknown, since = con.execute(sql("ui", "facts_since")).fetchall()[0]
        where, params = verdicts_since_sql(None if unknown else since)
        evaluations = con.sql(sql("ui", "facts_verdicts") + where, params=params or None).to_arrow_table()
    table = compute(con, trace_ids, evaluations, ("attribution",))["attribution"]
    return dict(
        zip(table.column("trace_id").to_pylist(), table.column("root_cause").to_pylist(), strict=True)
    )
