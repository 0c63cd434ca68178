"""The DuckDB store: one file, one writing connection, sandboxed read cursors.

DuckDB allows one writing process per file, and within the process one database instance whose
settings are global. ``Store`` opens the instance once (``connect``), migrates it, then sandboxes it
for every later statement; a batch's writes are ``ingest``'s, and the writer checkpoints when ingest
pauses (``checkpoint``).
"""

from __future__ import annotations

import threading
from pathlib import Path

import duckdb
import pyarrow as pa

from collector.ingest.batch import ArrowBatch, SpanBatch
from collector.store.backend import opened
from collector.store.base import Faults, instance_config
from collector.store.content import ContentSources
from collector.store.file import ingest
from collector.store.file.checkpoint import IDLE_CHECKPOINT_BYTES, WAL_HARD_LIMIT, wal_bytes
from collector.store.file.connect import disk_full, full_message, is_invalidated, open_file, sandbox
from collector.store.file.ingest import KnownTraces
from collector.store.inputs import Inputs
from collector.store.schema import migrate
from collector.store.sqlfiles import sql
from ragfault_core.errors import StoreUnavailable


class Store(Faults):
    """A DuckDB file opened by this process. ``read_only`` opens for the CLI when no server runs."""

    def __init__(
        self,
        path: str | Path,
        *,
        read_only: bool = False,
        memory_limit: str | None = None,
        threads: int | None = None,
    ) -> None:
        self.path = str(path)
        self.read_only = read_only
        # whose GenAI content events re-open a settled trace (the server sets its own, with a counter)
        self.content_sources = ContentSources()
        config = instance_config(memory_limit, threads)
        if not read_only:
            # the writer checkpoints when ingest pauses (``checkpoint_if_idle``); this threshold is
            # only the hard cap under sustained load
            config["checkpoint_threshold"] = WAL_HARD_LIMIT
        if self.path != ":memory:" and not read_only:
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        # why the store cannot write now (a full disk), or None; ``fatal`` once DuckDB invalidated
        # the database after a failed write (only a new process can open it again)
        Faults.__init__(self)
        self.con, self._database = open_file(self.path, read_only, config)
        try:
            if not read_only:
                migrate(self.con)
                pa.array(["warm-up"], type=pa.string())  # pyarrow's first conversion loads lazily (~0.4 s)
                from collector.store.file import facts
                from collector.store.views import create_views

                create_views(self.con, facts.view_bodies())
                facts.fill_pending(self.con)
            sandbox(self.con)
        except duckdb.Error as exc:
            self.con.close()
            if disk_full(exc) or is_invalidated(exc):
                raise StoreUnavailable(full_message(self.path, exc)) from exc
            raise
        opened(self.con, lake=False)  # (operations ask ``backend.is_lake``: no query each time)
        self._lock = threading.Lock()
        self._registered: dict[int, tuple[duckdb.DuckDBPyConnection, Inputs]] = {}
        self._known: KnownTraces | None = None

    def note_failure(self, exc: BaseException) -> None:
        """A write or checkpoint failed: remember why when the disk is full, and tell ``on_fatal``
        once DuckDB has invalidated the database."""
        if is_invalidated(exc):
            self._fail(
                "the database was invalidated by a failed write (is the disk full?); the server must restart",
                fatal=True,
            )
        elif disk_full(exc):
            self._fail(f"cannot write {self.path}: no space left on device")

    def wal_bytes(self) -> int:
        return wal_bytes(self.path)

    def checkpoint_if_idle(
        self, con: duckdb.DuckDBPyConnection, min_bytes: int = IDLE_CHECKPOINT_BYTES
    ) -> bool:
        """Checkpoint when the WAL holds at least ``min_bytes`` (writer thread, no ingest waiting)."""
        if self.read_only or self.path == ":memory:" or self.wal_bytes() < min_bytes:
            return False
        con.execute("CHECKPOINT")
        return True

    def cursor(self) -> duckdb.DuckDBPyConnection:
        """A new connection to the same instance (for a reader thread), in the store's database."""
        cur = self.con.cursor()
        if self._database is not None:
            cur.execute(f'USE "{self._database}"')
        return opened(cur, lake=False)

    def close(self) -> None:
        try:
            if not self.read_only:
                self.con.execute("CHECKPOINT")
        except duckdb.Error:
            pass
        self.con.close()

    # --- writes: called only from the writer thread -------------------------------------------

    def write_spans(self, con: duckdb.DuckDBPyConnection, batch: ArrowBatch | SpanBatch) -> int:
        """Append a batch in one transaction; returns how many spans were new (``ingest.write_spans``:
        re-sent ones are ignored)."""
        if not len(batch):
            return 0
        return ingest.write_spans(con, batch, self._inputs(con), self._known_traces(con))

    def write_signals(self, con: duckdb.DuckDBPyConnection, batch: ArrowBatch) -> tuple[int, int]:
        """Append a batch's log records and metric data points in one transaction; returns how many
        of each were new (``ingest.write_signals``)."""
        return ingest.write_signals(con, batch, self.content_sources)

    def _inputs(self, con: duckdb.DuckDBPyConnection) -> Inputs:
        """The ``_in_*`` views of this connection, registered once (registering costs ~1 ms a table)."""
        key = id(con)
        with self._lock:
            found = self._registered.get(key)
            if found is not None and found[0] is con:
                return found[1]
            if len(self._registered) >= 64:  # connections come and go in tests and CLI commands
                self._registered.clear()
            inputs = Inputs()
            inputs.register(con)
            self._registered[key] = (con, inputs)  # holding ``con`` keeps its id from being reused
            return inputs

    def _known_traces(self, con: duckdb.DuckDBPyConnection) -> KnownTraces:
        """The trace ids written lately; at the first write, those of the traces received last."""
        with self._lock:
            known = self._known
            if known is None:
                known = self._known = KnownTraces()
                rows = con.execute(sql("file/ingest", "recent_traces"), {"n": known.size}).fetchall()
                known.add([r[0] for r in rows])
            return known
