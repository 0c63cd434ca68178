"""The dashboard's facts: what its sections aggregate, kept in memory as Arrow tables and brought up
to date by computing again only the traces that changed.

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
refusal table is the bundled query itself);
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

Kept across restarts: the facts, their stamps and the version they were computed at are saved beside
the database file (``<db>.ui-facts/``: one Arrow IPC file a table and ``facts.json``), after each full
computation, when ``SAVE_SHARE`` of the traces were computed again since the last save, and when the
server stops. A server starting loads them (memory-mapped) and brings them up to date as above: only
the traces whose stamp moved while it was down are computed again. Saved facts are used only when
``form`` matches: a hash of every statement they are computed from and of the attribution view's
definition, so facts of another version of the code are computed again. A full computation a call
needs runs in the background (``start_full``); the dashboard's calls then answer that it is under way
(``Building``) instead of waiting for it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime
from functools import cache
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from collector.store.base import Con
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

FULL_SHARE = 0.25
"""Past this share of the evaluated traces changed, computing them all again reads no more than
computing the changed ones (their verdicts are spread over the whole table)."""

SAVE_SHARE = 0.05
"""Past this share of the traces computed again since the facts were last saved, they are saved again
(in the background): a restart then computes again at most about this share."""

PATIENCE = 2.0
"""How long a call that does not wait (``wait`` false) waits for a full computation in the background
before it answers ``Building``: a small database's is done by then."""

log = logging.getLogger(__name__)

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
    view = con.execute(
        "SELECT sql FROM duckdb_views() WHERE view_name = 'attribution' AND NOT internal"
    ).fetchall()
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


class Building(Exception):
    """The facts are being computed in full in the background: ``since`` (a ``time.time()``) and why."""

    def __init__(self, since: float, why: str) -> None:
        super().__init__(f"the dashboard's facts are being computed ({why})")
        self.since = since
        self.why = why


class _NeedsFull(Exception):
    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.why = why


@dataclass
class Refreshes:
    """How the facts were kept: full computations, partial ones and the traces those recomputed."""

    full: int = 0
    partial: int = 0
    traces: int = 0
    loaded: int = 0  # facts read from where they were saved
    saved: int = 0
    last: str = ""
    history: list[str] = field(default_factory=list)


def compute(
    con: Con,
    ids: list[str] | None = None,
    evaluations: pa.Table | None = None,
    names: tuple[str, ...] = tuple(TABLES),
) -> dict[str, pa.Table]:
    """The tables ``names`` for every evaluated trace (``ids`` None) or for the traces ``ids``, whose
    verdicts (``evaluations``) the statements read in place of the table."""
    if ids is None:
        return {name: _encoded(con.sql(_statement(name, "")).to_arrow_table()) for name in names}
    assert evaluations is not None
    with registered(con, {"evaluations": evaluations, "_ui_ids": ids_table(ids)}):
        # the id filter keeps the result right even if a backend resolved the view's table elsewhere
        return {name: _encoded(con.sql(_statement(name, _IDS)).to_arrow_table()) for name in names}


def hourly(con: Con, stmt: str, rows: pa.Table, hours: pa.Array | None = None) -> pa.Table:
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


def _replace(old: pa.Table, gone: pa.Array, new: pa.Table) -> pa.Table:
    out = _without(old, pc.is_in(old.column("trace_id"), value_set=gone))
    if new.num_rows:
        out = pa.concat_tables([out, new if new.schema == old.schema else new.cast(old.schema)])
    return out.combine_chunks() if out.num_columns and out.column(0).num_chunks > _MAX_CHUNKS else out


def _saved_names(tables: dict[str, pa.Table]) -> list[str]:
    return ["stamps", *tables]


def save(path: Path, facts: Facts, key: tuple[Any, ...], shape: str) -> None:
    """Write the facts to the directory ``path``: each table a new Arrow IPC file, then ``facts.json``
    naming them (replaced in one rename, so a reader sees the old set or the new one), then the files
    of earlier saves removed."""
    path.mkdir(parents=True, exist_ok=True)
    stamp = f"{time.time_ns()}-{os.getpid()}"
    files = {}
    for name, table in {"stamps": facts.stamps, **facts.tables}.items():
        file = f"{name}.{stamp}.arrow"
        # one chunk, one dictionary a column: the IPC file format holds no dictionary replacement
        table = table.unify_dictionaries().combine_chunks()
        with pa.OSFile(str(path / file), "wb") as sink, pa.ipc.new_file(sink, table.schema) as out:
            out.write_table(table)
        files[name] = file
    meta = {"form": shape, "key": list(key), "files": files, "saved_at": time.time()}
    tmp = path / f"facts.json.{stamp}"
    tmp.write_text(json.dumps(meta), encoding="utf-8")
    os.replace(tmp, path / "facts.json")
    for old in path.iterdir():
        if old.name != "facts.json" and old.name not in files.values():
            with contextlib.suppress(OSError):
                old.unlink()


def load(path: Path, shape: str) -> tuple[tuple[Any, ...], Facts] | None:
    """The facts saved in ``path`` and the version they were computed at; None when there are none, or
    they are of another ``form``, or cannot be read."""
    try:
        meta = json.loads((path / "facts.json").read_text(encoding="utf-8"))
        if meta.get("form") != shape:
            return None
        tables = {
            name: pa.ipc.open_file(pa.memory_map(str(path / file))).read_all()
            for name, file in meta["files"].items()
        }
    except (OSError, ValueError, KeyError, pa.ArrowException):
        return None
    stamps = tables.pop("stamps", None)
    if stamps is None or set(tables) != {*TABLES, *PARTS}:
        return None
    return tuple(meta["key"]), Facts(stamps, tables)


@dataclass(frozen=True)
class _Running:
    since: float
    why: str


class DashboardFacts:
    """The facts of one database, computed on first use (or loaded from ``path``) and kept up to date
    on each call (thread-safe: one refresh at a time, readers share the tables, which are never
    changed in place). ``cursor``: opens a cursor for the work done in the background (computing
    everything, saving)."""

    def __init__(
        self,
        full_share: float = FULL_SHARE,
        path: str | Path | None = None,
        cursor: Callable[[], Con] | None = None,
        save_share: float = SAVE_SHARE,
        patience: float = PATIENCE,
    ) -> None:
        self.full_share = full_share
        self.patience = patience
        self.save_share = save_share
        self.path = Path(path) if path is not None else None
        self.cursor = cursor
        self.lock = threading.Lock()  # one refresh at a time
        self.state: tuple[tuple[Any, ...], Facts] | None = None  # (version, facts), swapped whole
        self.refreshes = Refreshes()
        self.running: _Running | None = None  # a full computation in the background
        self._thread: threading.Thread | None = None
        self._worker: Con | None = None
        self._unsaved = 0  # traces computed again since the last save (-1: never saved)
        self._save_lock = threading.Lock()
        self._bg_lock = threading.Lock()
        self._shape: str | None = None

    @property
    def key(self) -> tuple[Any, ...] | None:
        return self.state[0] if self.state else None

    @property
    def facts(self) -> Facts | None:
        return self.state[1] if self.state else None

    def current(self, con: Con, build: bool = True, wait: bool = True) -> Facts | None:
        """The facts as of now. None when none were computed yet and ``build`` is false, or when
        ``build`` is false and they are being computed in full in the background. ``wait`` false: a
        full computation (needed now or under way) runs in the background, and ``Building`` is
        raised if it takes longer than ``patience`` seconds."""
        key = version(con)
        for _ in range(2):  # a second look after a computation in the background ended
            state = self.state
            if state is not None and state[0] == key:
                return state[1]
            if self.running is not None and not (build and wait):
                if not build:
                    return None
                self._patient()
                continue
            if state is None and not build:
                return None
            try:
                with self.lock:
                    return self._current(con, key, wait)
            except _NeedsFull as need:
                self.start_full(need.why)
                if not build:
                    return None
                self._patient()
        with self.lock:
            return self._current(con, key, wait)

    def _patient(self) -> None:
        """Wait up to ``patience`` seconds for the work in the background; ``Building`` if it goes on."""
        thread = self._thread
        if thread is not None:
            thread.join(self.patience)
        running = self.running
        if running is not None:
            raise Building(running.since, running.why)

    def _current(self, con: Con, key: tuple[Any, ...], wait: bool) -> Facts:
        state = self.state  # as another refresh may have left it
        if state is not None and state[0] == key:
            return state[1]
        if state is None and self.path is not None and self.refreshes.loaded == 0:
            self._load(con)
        facts = self._refresh(con, key, wait)
        self.state = (key, facts)
        n = facts.traces
        if self.path is not None and (self._unsaved < 0 or self._unsaved > self.save_share * max(n, 1)):
            threading.Thread(target=self.save, args=(False,), name="ui-facts-save", daemon=True).start()
        return facts

    def use(self, con: Con, build: bool = True, wait: bool = True) -> bool:
        """Make the reads on this cursor see the facts under their names (``attribution`` in place of
        the view); False when there are none yet and ``build`` is false (the view is read then)."""
        facts = self.current(con, build, wait)
        if facts is None:
            return False
        for name, table in facts.tables.items():
            con.register(name, table)
        return True

    # --- in the background: at start, a full computation, saving -------------------------------

    def start(self) -> None:
        """Bring the facts up to date in the background (loading the saved ones first): a server's
        first dashboard call then finds them, or finds them being computed (``Building``)."""
        self._background(self._warm, None)

    def start_full(self, why: str) -> None:
        """Compute the facts in full in the background (unless work is under way there already)."""
        self._background(self._full_now, _Running(time.time(), why))

    def _warm(self, con: Con) -> None:
        with self.lock:
            try:
                self._current(con, version(con), wait=False)
                return
            except _NeedsFull as need:
                self.running = _Running(time.time(), need.why)
        self._full_now(con)

    def _full_now(self, con: Con) -> None:
        with self.lock:
            self._current(con, version(con), wait=True)

    def _background(self, work: Callable[[Con], Any], running: _Running | None) -> None:
        if self.cursor is None:
            raise RuntimeError("no cursor for work in the background")
        with self._bg_lock:
            if self._thread is not None and self._thread.is_alive():
                return
            self.running = running
            self._worker = con = self.cursor()

            def run() -> None:
                try:
                    work(con)
                except Exception:  # noqa: BLE001 (the next call computes them itself and raises)
                    log.exception("computing the dashboard's facts failed")
                finally:
                    self.running = None
                    self._worker = None
                    con.close()

            self._thread = threading.Thread(target=run, name="ui-facts", daemon=True)
            self._thread.start()

    def stop(self, timeout: float = 30) -> None:
        """Stop the work in the background (a computation is interrupted) and save the facts if they
        moved since they were last saved."""
        worker, thread = self._worker, self._thread
        if worker is not None:
            with contextlib.suppress(Exception):
                worker.interrupt()
        if thread is not None:
            thread.join(timeout)
        self.save()

    def save(self, block: bool = True) -> bool:
        """Save the facts (``path``) if they moved since they were last saved; ``block`` false: not
        when a save is under way."""
        if self.path is None or not self._save_lock.acquire(blocking=block):
            return False
        try:
            state, unsaved = self.state, self._unsaved
            if state is None or unsaved == 0 or self._shape is None:
                return False
            try:
                save(self.path, state[1], state[0], self._shape)
            except OSError:
                log.exception("cannot save the dashboard's facts to %s", self.path)
                return False
            if self.state is state:
                self._unsaved = 0
            else:
                self._unsaved = max(self._unsaved - unsaved, 1)
            self.refreshes.saved += 1
            return True
        finally:
            self._save_lock.release()

    def _load(self, con: Con) -> None:
        assert self.path is not None
        self._shape = form(con)
        found = load(self.path, self._shape)
        self.refreshes.loaded += 1
        if found is not None:
            self.state = found
            self._note(f"loaded {found[1].traces} traces from {self.path.name}")

    # --- computing ------------------------------------------------------------------------------

    def _refresh(self, con: Con, key: tuple[Any, ...], wait: bool) -> Facts:
        # the stamps are read before the verdicts they vouch for: a trace evaluated in between has
        # a newer stamp at the next call, never an old stamp on new rows
        old_state = self.state
        if old_state is not None and old_state[0] == key:
            return old_state[1]
        stamps = con.sql(sql("ui", "facts_stamps")).to_arrow_table()
        old, old_key = (old_state[1], old_state[0]) if old_state else (None, None)
        if old is None or old_key is None or key[2:4] != old_key[2:4]:
            return self._full(con, stamps, "first" if old is None else "gold cases changed", wait)
        with registered(con, {"_ui_new_stamps": stamps, "_ui_stamps": old.stamps}):
            changed = [r[0] for r in con.execute(sql("ui", "facts_changed")).fetchall()]
        if not changed:
            if key[0:2] != old_key[0:2]:
                return self._full(con, stamps, "verdicts changed without a stamp", wait)
            return Facts(stamps, old.tables)
        if len(changed) > self.full_share * max(stamps.num_rows, 1):
            return self._full(con, stamps, f"{len(changed)} of {stamps.num_rows} traces changed", wait)
        ids = pa.array(changed, pa.string())
        mine = stamps.filter(pc.is_in(stamps.column("trace_id"), value_set=ids))
        since = mine.column("verdicts_since")
        # a trace without verdicts_since may have verdicts anywhere: then every row is read
        bound = None if since.null_count else pc.min(since).as_py()
        with registered(con, {"_ui_ids": ids_table(changed)}):
            evaluations = con.sql(sql("ui", "facts_verdicts"), params={"since": bound}).to_arrow_table()
        new = compute(con, changed, evaluations)
        self.refreshes.partial += 1
        self.refreshes.traces += len(changed)
        if self._unsaved >= 0:
            self._unsaved += len(changed)
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

    def _full(self, con: Con, stamps: pa.Table, why: str, wait: bool = True) -> Facts:
        if not wait:
            raise _NeedsFull(why)
        tables = compute(con)
        for name, (source, stmt) in PARTS.items():
            tables[name] = hourly(con, stmt, tables[source])
        self.refreshes.full += 1
        self._unsaved = -1
        if self.path is not None and self._shape is None:
            self._shape = form(con)
        self._note(f"all computed ({why})")
        return Facts(stamps, tables)

    def _note(self, what: str) -> None:
        self.refreshes.last = what
        self.refreshes.history = [*self.refreshes.history[-19:], what]


def root_causes(con: Con, trace_ids: list[str]) -> dict[str, str]:
    """The root cause of each of these traces (those with one), computed from their own verdicts
    alone, read since their ``verdicts_since``: what a page of the trace list shows before the
    dashboard's facts exist."""
    with registered(con, {"_ui_ids": ids_table(trace_ids)}):
        unknown, since = con.execute(sql("ui", "facts_since")).fetchall()[0]
        bound = None if unknown else since
        evaluations = con.sql(sql("ui", "facts_verdicts"), params={"since": bound}).to_arrow_table()
    table = compute(con, trace_ids, evaluations, ("attribution",))["attribution"]
    return dict(
        zip(table.column("trace_id").to_pylist(), table.column("root_cause").to_pylist(), strict=True)
    )
