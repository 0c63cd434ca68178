"""The dashboard's facts: what its sections aggregate, kept in memory as Arrow tables and brought up
to date by computing again only the traces that changed. The tables, and the statements that compute
them, are ``ui_facts_tables``'s; saving and loading them, ``ui_facts_saved``'s.

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
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from collector.store.base import Con, arrow_rows
from collector.store.sqlfiles import sql
from collector.store.ui_facts_saved import load, save
from collector.store.ui_facts_tables import (
    PARTS,
    TABLES,
    Facts,
    compute,
    form,
    hourly,
    refusal_table_sql,
    replace_hours,
    replace_rows,
    root_causes,
    version,
)
from collector.store.verdicts import ids_table, registered

__all__ = ["Building", "DashboardFacts", "Facts", "Refreshes", "refusal_table_sql", "root_causes"]

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
            evaluations = arrow_rows(con, sql("ui", "facts_verdicts"), {"since": bound})
        new = compute(con, changed, evaluations)
        self.refreshes.partial += 1
        self.refreshes.traces += len(changed)
        if self._unsaved >= 0:
            self._unsaved += len(changed)
        self._note(f"{len(changed)} traces recomputed")
        tables = {name: replace_rows(old.tables[name], ids, new[name]) for name in TABLES}
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
            tables[name] = replace_hours(old.tables[name], hours, hourly(con, stmt, tables[source], hours))
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
