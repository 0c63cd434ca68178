"""The DuckLake store: span tables in a lake (a PostgreSQL catalog, Parquet files under a data path)
that several collector processes write at once.

``LakeStore`` opens the lake (``attach``: its extensions and catalog), makes its tables and views
(``tables``, ``schema``), keeps this process's presence and claims in the catalog (``holders``,
``claims``) and hands out cursors; a batch's writes are ``ingest``'s, settling's and evaluation's
paths are ``work``'s. What users read keeps one row per span whatever the raw tables hold; copies
another collector stored are deleted by maintenance (``compact_duplicates``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb

from collector.ingest.batch import ArrowBatch, SpanBatch
from collector.store.backend import opened
from collector.store.base import Faults, instance_config
from collector.store.content import ContentSources
from collector.store.lake import claims, tables
from collector.store.lake.attach import LAKE, attach, catalog_conninfo, load_extensions, quote, redact
from collector.store.lake.holders import Presence, extension_loader
from collector.store.lake.ingest import Ingest
from collector.store.lake.tables import DOC_KEY
from collector.store.templates import filled
from collector.store.tx import rollback


class LakeStore(Faults):
    """A lake attached by this process; the same surface as ``file.store.Store`` for the writer and
    the SQL API (``con``, ``cursor()``, ``write_spans``, ``checkpoint_if_idle``, ``close``).
    ``claim_seconds``: how long this process's claims to settle or evaluate a trace last;
    ``claim_max_traces``: how many traces one settle or evaluation round claims at most
    (``claims``)."""

    def __init__(
        self,
        catalog: str,
        data_path: str | Path,
        *,
        read_only: bool = False,
        memory_limit: str | None = None,
        threads: int | None = None,
        extension_repository: bool = True,
        extension_packages: bool = True,
        extension_dir: str | Path | None = None,
        claim_seconds: float = 120.0,
        claim_max_traces: int = 500,
    ) -> None:
        self.catalog = catalog
        self.data_path = str(Path(data_path).resolve())
        self.path = f"ducklake:{redact(catalog)} ({self.data_path})"
        self.read_only = read_only
        # whose GenAI content events fill a span (the server sets its own). As on a file, a new one
        # re-opens a settled trace only when its span may take it (``ingest``); the settle round
        # keeps another service's records out of the span all the same
        self.content_sources = ContentSources()
        # the writer's fault bookkeeping (``base.Faults``); a lake commit that fails is retried by the
        # writer and never invalidates a local file, so ``fatal`` stays False
        Faults.__init__(self)
        config = instance_config(memory_limit, threads)
        conninfo = catalog_conninfo(catalog)
        if not read_only:
            Path(self.data_path).mkdir(parents=True, exist_ok=True)
        # told the kinds of work whose claims another holder left (gone, or expired): a loop that
        # skipped those traces looks again (``claims.freed``, read at each presence beat)
        self.claim_listeners: list[Callable[[set[str]], None]] = []
        self._freed_seen: set[tuple[str, str, str]] = set()
        self._watching = threading.Lock()  # (the presence's thread, and a caller's)
        self.con = duckdb.connect(":memory:", config=config)
        try:
            self.extensions = load_extensions(
                self.con,
                repository=extension_repository,
                packages=extension_packages,
                directory=extension_dir,
            )
            attach(self.con, catalog, conninfo, self.data_path, read_only=read_only)
            opened(self.con, lake=True)  # (operations ask ``backend.is_lake``: no query each time)
            self.presence: Any = None
            if not read_only:
                # claims of work in the catalog's database (settling, evaluation across collectors),
                # held by this store's presence there: they are free once this process is gone
                self.presence = Presence(
                    catalog,
                    load=extension_loader(
                        repository=extension_repository, packages=extension_packages, directory=extension_dir
                    ),
                )
                self.presence.on_beat = self._watch_claims
                claims.attach(
                    self.con,
                    conninfo,
                    claim_seconds,
                    holder=self.presence.holder,
                    max_traces=claim_max_traces,
                )
                tables.create(self.con)  # (after: the lake's ``trace_claims`` reads the claims table)
            else:  # the claims read (``trace_claims``), none taken
                claims.attach_read_only(self.con, conninfo)
            # the instance's sandbox (``file.connect.sandbox``), with the data path the only directory left
            self.con.execute(f"SET allowed_directories = ['{quote(self.data_path.rstrip('/') + '/')}']")
            self.con.execute("SET enable_external_access = false")
            self.con.execute("SET lock_configuration = true")
        except BaseException:
            if getattr(self, "presence", None) is not None:
                self.presence.close()
            self.con.close()
            raise
        self._ingest = Ingest()
        if not read_only:
            self._ingest.remember_recent(self.con)

    def note_failure(self, exc: BaseException) -> None:
        self._fail(f"lake commit failed: {exc}")

    # --- the surface the writer and the readers use -------------------------------------------

    def cursor(self) -> duckdb.DuckDBPyConnection:
        """A new connection to the same instance, reading the lake (a cursor starts in ``memory``)."""
        cur = self.con.cursor()
        cur.execute(f"USE {LAKE}")
        return opened(cur, lake=True)

    def write_spans(self, con: duckdb.DuckDBPyConnection, batch: ArrowBatch | SpanBatch) -> int:
        """Append the batch's new spans in one transaction; returns how many were new (``ingest``)."""
        return self._ingest.write_spans(con, batch)

    def write_signals(self, con: duckdb.DuckDBPyConnection, batch: ArrowBatch) -> tuple[int, int]:
        """Append the batch's new log records and metric data points; returns how many of each were
        new (``ingest``)."""
        return self._ingest.write_signals(con, batch, self.content_sources)

    def wal_bytes(self) -> int:
        return 0

    def checkpoint_if_idle(self, con: duckdb.DuckDBPyConnection, min_bytes: int = 0) -> bool:
        """Nothing to do at an ingest pause: every commit already wrote its Parquet files. (Merging
        the small files is maintenance, not the writer's.)"""
        return False

    def close(self) -> None:
        if self.presence is not None:
            self.presence.close()
        try:
            self.con.close()
        except duckdb.Error:
            pass

    def _watch_claims(self) -> None:
        """At each beat of the presence: tell ``claim_listeners`` the kinds of the claims that became
        free since the last beat (each once)."""
        if not self.claim_listeners:
            return
        with self._watching:
            cur = self.con.cursor()
            try:
                freed = claims.freed(cur)
            finally:
                cur.close()
            new, self._freed_seen = freed - self._freed_seen, freed
        kinds = {kind for kind, _, _ in new}
        if kinds:
            for listener in list(self.claim_listeners):
                listener(kinds)

    # --- maintenance --------------------------------------------------------------------------

    def compact_duplicates(self, con: duckdb.DuckDBPyConnection | None = None) -> dict[str, int]:
        """Delete the second and later copies of each span from the raw tables, and of each log record
        and metric point (one transaction); returns the rows deleted per table. Run it in one process
        at a time: two running at once conflict, and the loser is rolled back (nothing is lost; it
        deletes nothing)."""
        con = con or self.cursor()
        keys = {
            "span_rows": ("trace_id, span_id", "received_at, rowid"),
            "step_rows": ("trace_id, span_id", "rowid"),
            "step_document_rows": (DOC_KEY, "received_at, rowid"),
            "log_records": ("record_id", "received_at, rowid"),
            "metric_points": ("point_id", "received_at, rowid"),
        }
        deleted: dict[str, int] = {}
        con.execute("BEGIN TRANSACTION")
        try:
            for table, (partition, order) in keys.items():
                text = filled("lake/compact", "delete_copies", table=table, key=partition, order=order)
                row = con.execute(text).fetchone()
                deleted[table] = int(row[0]) if row else 0
            con.execute("COMMIT")
        except BaseException:
            rollback(con)
            raise
        return deleted
