"""The DuckLake store: span tables in a lake (a PostgreSQL catalog, Parquet files under a data path)
that several collector processes write at once.

A lake table has no primary key, unique constraint or index, so span identity is kept in two places:

- within a collector, at commit: a batch keeps the first copy of each (trace_id, span_id) and drops
  the spans this process committed lately (``RECENT_SPANS`` a generation, two generations; at start
  the spans the lake received in the last ``RECENT_WINDOW``), so a re-sent request is not stored twice;
- across collectors (a span sent to two of them, or re-sent past that window): the raw tables
  ``span_rows``, ``step_rows`` and ``step_document_rows`` may hold a second copy, and what users and
  the bundled SQL read, the views ``spans``, ``steps``, ``step_documents`` and ``traces``, keep one row
  per span. ``LakeStore.compact_duplicates`` deletes the extra copies (maintenance).

Log records and metric data points (``write_signals``) go to the plain tables ``log_records`` and
``metric_points`` and are kept once within a collector the same way, by their ids; a copy another
collector stored stays until maintenance.

The raw tables have the columns of the single-file store's tables (read from its migrations), so the
two stores hold the same rows.

The extensions load without network: from DuckDB's extension repository when it answers, else from
the ``duckdb-extension-*`` packages on PyPI (``pip install 'ragfault[lake]'``), else from a local
directory (``extension_dir``).
"""

from __future__ import annotations

import datetime as dt
import importlib.util
import logging
import re
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import duckdb
import pyarrow as pa

from collector.batch import DOC_COLUMNS, SPAN_COLUMNS, STEP_COLUMNS, ArrowBatch, SpanBatch
from collector.errors import ConfigError
from collector.model import DOCUMENT, SPAN, STEP
from collector.normalize.genai_events import CONTENT_EVENTS
from collector.signals import LOG_COLUMNS, POINT_COLUMNS
from collector.store.backend import opened
from collector.store.base import Faults, instance_config
from collector.store.content import ContentSources, admitted
from collector.store.duck import CONFLICT_RETRIES, _Inputs
from collector.store.schema import batch_to_arrow
from collector.store.templates import filled
from collector.store.tx import rollback

log = logging.getLogger("ragfault.lake")

LAKE = "lake"  # the attached lake's name; every cursor uses it
MODEL_TABLES = {t.name: t for t in (SPAN, STEP, DOCUMENT)}
RAW_TABLES = {"spans": "span_rows", "steps": "step_rows", "step_documents": "step_document_rows"}
ATTACH_ATTEMPTS = 8
RECENT_SPANS = 100_000  # span ids a collector remembers, per generation (two generations)
RECENT_WINDOW_MINUTES = 10  # at start, the spans received this long ago are remembered
# (PyPI package, extension file name) of each extension the lake needs, in load order
EXTENSIONS = (
    ("duckdb_extension_postgres_scanner", "postgres_scanner"),
    ("duckdb_extension_ducklake", "ducklake"),
)
# what a user reads: one row per span whatever the raw tables hold
_DOC_KEY = ", ".join(c for c in DOC_COLUMNS if c != "received_at")
VIEWS = {
    "spans": "SELECT * FROM span_rows QUALIFY row_number() OVER (PARTITION BY trace_id, span_id ORDER BY received_at) = 1",
    "steps": "SELECT DISTINCT ON (trace_id, span_id) * FROM step_rows",
    "step_documents": f"SELECT DISTINCT ON ({_DOC_KEY}) * FROM step_document_rows",
    # the single-file store keeps this table up to date at ingest; here it is summed up when read
    "traces": """
SELECT trace_id, min(received_at) AS first_received_at, max(received_at) AS last_received_at,
       count(*) AS span_count, count(*) FILTER (WHERE status_code = 'ERROR') AS error_count,
       bool_or(parent_span_id IS NULL) AS has_root,
       any_value(span_id) FILTER (WHERE parent_span_id IS NULL) AS root_span_id,
       any_value(name) FILTER (WHERE parent_span_id IS NULL) AS root_name,
       min(start_time) AS start_time, max(end_time) AS end_time,
       coalesce(any_value(service_name) FILTER (WHERE parent_span_id IS NULL), any_value(service_name)) AS service_name,
       any_value(case_id) AS case_id, any_value(run_id) AS run_id, any_value(session_id) AS session_id,
       any_value(user_id) AS user_id
FROM spans GROUP BY trace_id""",
}


# --- extensions ---------------------------------------------------------------------------------


def _package_file(package: str, name: str) -> Path | None:
    """The extension file a ``duckdb-extension-*`` wheel installs (``<package>/extensions/v<X.Y.Z>/``),
    for this DuckDB's version, if that package is installed."""
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.origin:
        return None
    path = Path(spec.origin).parent / "extensions" / f"v{duckdb.__version__}" / f"{name}.duckdb_extension"
    return path if path.is_file() else None


def _dir_file(directory: Path, name: str) -> Path | None:
    """``name.duckdb_extension`` directly in ``directory``, or in DuckDB's own extension-directory
    layout below it (``v<version>/<platform>/``)."""
    flat = directory / f"{name}.duckdb_extension"
    if flat.is_file():
        return flat
    for found in sorted(directory.glob(f"v{duckdb.__version__}/*/{name}.duckdb_extension")):
        return found
    return None


def _loaded(con: duckdb.DuckDBPyConnection, name: str) -> bool:
    row = con.execute("SELECT loaded FROM duckdb_extensions() WHERE extension_name = ?", [name]).fetchone()
    return bool(row and row[0])


def load_extensions(
    con: duckdb.DuckDBPyConnection,
    *,
    repository: bool | str = True,
    packages: bool = True,
    directory: str | Path | None = None,
) -> dict[str, str]:
    """Load ``postgres_scanner`` and ``ducklake`` into ``con``: from an extension repository
    (``INSTALL`` then ``LOAD``; ``True`` is DuckDB's own, a string another URL or local directory) when
    it answers, else from the installed PyPI package, else from ``directory``. Returns where each came
    from; raises ``ConfigError`` with one line naming every place tried."""
    origin: dict[str, str] = {}
    for package, name in EXTENSIONS:
        tried: list[str] = []
        if _loaded(con, name):
            origin[name] = "already loaded"
            continue
        if repository:
            source = "" if repository is True else f" FROM '{_quote(str(repository))}'"
            where = "DuckDB's extension repository" if repository is True else f"repository {repository}"
            try:
                con.execute(f"INSTALL {name}{source}")
                con.execute(f"LOAD {name}")
                origin[name] = where
                continue
            except duckdb.Error as exc:
                tried.append(f"{where} ({_first_line(exc)})")
        candidates: list[tuple[str, Path | None]] = []
        if packages:
            candidates.append((f"package {package.replace('_', '-')}", _package_file(package, name)))
        if directory:
            candidates.append((f"directory {directory}", _dir_file(Path(directory), name)))
        for where, path in candidates:
            if path is None:
                tried.append(f"{where} (no {name}.duckdb_extension for DuckDB {duckdb.__version__})")
                continue
            try:
                con.execute(f"LOAD '{_quote(str(path))}'")
                origin[name] = str(path)
                break
            except duckdb.Error as exc:
                tried.append(f"{path} ({_first_line(exc)})")
        if name not in origin:
            if not tried:
                tried.append("nothing (repository, packages and directory all off)")
            raise ConfigError(
                f"cannot load the DuckDB extension {name} for DuckDB {duckdb.__version__}; tried: "
                + "; ".join(tried)
                + ". Install 'ragfault[lake]' or set extension_dir"
            )
    return origin


def _first_line(exc: BaseException) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


def _quote(s: str) -> str:
    return s.replace("'", "''")


# --- catalog ------------------------------------------------------------------------------------


def catalog_conninfo(url: str) -> str:
    """``postgresql://USER[:PASSWORD]@HOST[:PORT]/DB[?k=v]`` -> a libpq key/value string (what the
    postgres extension is handed); raises ``ConfigError`` on anything else."""
    parts = urlsplit(url)
    if parts.scheme not in ("postgresql", "postgres") or not parts.hostname or not parts.path.strip("/"):
        raise ConfigError(f"catalog must be postgresql://USER@HOST:PORT/DB, got {url!r}")
    fields = {"host": parts.hostname, "dbname": unquote(parts.path.strip("/"))}
    try:
        if parts.port:
            fields["port"] = str(parts.port)
    except ValueError as exc:
        raise ConfigError(f"catalog {url!r}: {exc}") from exc
    if parts.username:
        fields["user"] = unquote(parts.username)
    if parts.password:
        fields["password"] = unquote(parts.password)
    for pair in filter(None, parts.query.split("&")):
        key, _, value = pair.partition("=")
        if not re.fullmatch(r"[a-z_]+", key):
            raise ConfigError(f"catalog {url!r}: bad parameter {key!r}")
        fields[key] = unquote(value)
    return " ".join(f"{k}={_libpq_value(v)}" for k, v in fields.items())


def _libpq_value(v: str) -> str:
    if v and not re.search(r"[\s'\\]", v):
        return v
    return "'" + v.replace("\\", "\\\\").replace("'", "\\'") + "'"


def span_table_columns() -> dict[str, list[tuple[str, str, bool]]]:
    """(column, type, not null) of ``spans``, ``steps`` and ``step_documents``: the single-file
    store's columns, from their one definition (``collector.model``)."""
    return {
        table: [(c.name, c.duck, not c.nullable) for c in MODEL_TABLES[table].columns] for table in RAW_TABLES
    }


class _RecentSpans:
    """Span keys (trace id + span id) this collector committed lately: two generations of at most
    ``size`` each, so memory stays bounded; a key that aged out is only caught by the views."""

    def __init__(self, size: int = RECENT_SPANS) -> None:
        self.size = size
        self._new: set[str] = set()
        self._old: set[str] = set()

    def __contains__(self, key: str) -> bool:
        return key in self._new or key in self._old

    def add(self, keys: Iterable[str]) -> None:
        self._new.update(keys)
        if len(self._new) >= self.size:
            self._old, self._new = self._new, set()


def _ddl_retrying(con: duckdb.DuckDBPyConnection, sql: str) -> None:
    """DDL that another collector starting at the same moment may commit first (``lake_ddl``)."""
    from collector.store import lake_ddl

    lake_ddl.idempotent(lambda: con.execute(sql), what="the lake's tables", undo=lambda: rollback(con))


class LakeStore(Faults):
    """A lake attached by this process; the same surface as ``duck.Store`` for the writer and the
    SQL API (``con``, ``cursor()``, ``write_spans``, ``checkpoint_if_idle``, ``close``).
    ``claim_seconds``: how long this process's claims to settle or evaluate a trace last;
    ``claim_max_traces``: how many traces one settle or evaluation round claims at most
    (``lake_claims``)."""

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
        self.path = f"ducklake:{_redact(catalog)} ({self.data_path})"
        self.read_only = read_only
        # whose GenAI content events fill a span (the server sets its own). As on a file, a new one
        # re-opens a settled trace only when its span may take it (``_admitted_events``); the settle
        # round keeps another service's records out of the span all the same
        self.content_sources = ContentSources()
        # the writer's fault bookkeeping (``base.Faults``); a lake commit that fails is retried by the
        # writer and never invalidates a local file, so ``fatal`` stays False
        Faults.__init__(self)
        config = instance_config(memory_limit, threads)
        conninfo = catalog_conninfo(catalog)
        if not read_only:
            Path(self.data_path).mkdir(parents=True, exist_ok=True)
        # told the kinds of work whose claims another holder left (gone, or expired): a loop that
        # skipped those traces looks again (``lake_claims.freed``, read at each presence beat)
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
            options = [f"DATA_PATH '{_quote(self.data_path.rstrip('/') + '/')}'"]
            if read_only:
                options.append("READ_ONLY")
            self._attach(f"ATTACH 'ducklake:postgres:{_quote(conninfo)}' AS {LAKE} ({', '.join(options)})")
            self.con.execute(f"USE {LAKE}")
            opened(self.con, lake=True)  # (operations ask ``backend.is_lake``: no query each time)
            self.presence: Any = None
            if not read_only:
                # claims of work in the catalog's database (settling, evaluation across collectors),
                # held by this store's presence there: they are free once this process is gone
                from collector.store import lake_claims
                from collector.store.lake_holders import Presence, extension_loader

                self.presence = Presence(
                    catalog,
                    load=extension_loader(
                        repository=extension_repository, packages=extension_packages, directory=extension_dir
                    ),
                )
                self.presence.on_beat = self._watch_claims
                lake_claims.attach(
                    self.con,
                    conninfo,
                    claim_seconds,
                    holder=self.presence.holder,
                    max_traces=claim_max_traces,
                )
                self._create()  # (after: the lake's ``trace_claims`` reads the claims table)
            else:  # the claims read (``trace_claims``), none taken
                from collector.store.lake_claims import attach_read_only

                attach_read_only(self.con, conninfo)
            # the instance's sandbox (``duck.sandbox``), with the data path the only directory left
            self.con.execute(f"SET allowed_directories = ['{_quote(self.data_path.rstrip('/') + '/')}']")
            self.con.execute("SET enable_external_access = false")
            self.con.execute("SET lock_configuration = true")
        except BaseException:
            if getattr(self, "presence", None) is not None:
                self.presence.close()
            self.con.close()
            raise
        self._lock = threading.Lock()
        self._recent = _RecentSpans()
        self._recent_logs = _RecentSpans()  # (record ids; point ids below: the same bounded memory)
        self._recent_points = _RecentSpans()
        if not read_only:
            self._remember_recent()

    def note_failure(self, exc: BaseException) -> None:
        self._fail(f"lake commit failed: {exc}")

    def write_signals(self, con: duckdb.DuckDBPyConnection, batch: ArrowBatch) -> tuple[int, int]:
        """Append a batch's new log records and metric data points (and the GenAI content events
        among the records, ``trace_content_events``) in one transaction; returns how many of each
        were new. As with spans, the first copy of a record repeated in the batch is kept and one
        this collector stored lately is dropped; a copy another collector stored stays until
        maintenance (``compact_duplicates``)."""
        logs = self._new_rows(batch.logs, "record_id", self._recent_logs)
        points = self._new_rows(batch.points, "point_id", self._recent_points)
        if logs is None and points is None:
            return 0, 0
        statements = []
        refused = 0
        if logs is not None:
            admitted, refused = self._admitted_events(con, logs)
            con.register("_in_logs", logs)
            con.register("_admitted", admitted)
            events = ", ".join(f"'{e}'" for e in sorted(CONTENT_EVENTS))
            statements += [
                filled("lake", "insert_log_records", columns=", ".join(LOG_COLUMNS)),
                filled("lake", "insert_content_events", events=events),
            ]
        if points is not None:
            con.register("_in_points", points)
            statements.append(filled("lake", "insert_points", columns=", ".join(POINT_COLUMNS)))
        try:
            self._commit(con, ";\n".join(["BEGIN TRANSACTION", *statements, "COMMIT"]))
        finally:
            for name in ("_in_logs", "_admitted", "_in_points"):
                try:
                    con.unregister(name)
                except duckdb.Error:
                    pass
        self.content_sources.count_refused(refused)
        log_ids = logs.column("record_id").to_pylist() if logs is not None else []
        point_ids = points.column("point_id").to_pylist() if points is not None else []
        with self._lock:
            self._recent_logs.add(log_ids)
            self._recent_points.add(point_ids)
        return len(set(log_ids)), len(set(point_ids))

    def _admitted_events(self, con: duckdb.DuckDBPyConnection, logs: pa.Table) -> tuple[pa.Table, int]:
        """The record ids of the GenAI content events among ``logs`` that may re-open their traces
        (``content.admitted``: a settled trace's span takes only its own service's records, or a
        trusted service's), as the table ``insert_content_events`` keeps; and how many were refused.
        A forged record is stored with the other log records, but counts in no trace's
        ``content_events``, so it starts no settle round nor evaluation. The look-up reads the
        catalog only for a batch that carries content events."""
        rows = [
            r
            for r in logs.select(
                ["record_id", "trace_id", "span_id", "service_name", "event_name"]
            ).to_pylist()
            if r["trace_id"] and r["event_name"] in CONTENT_EVENTS
        ]
        ok: list[str] = []
        refused = 0
        if rows:
            events = [(r["trace_id"], r["span_id"], r["service_name"]) for r in rows]
            flags, refused = admitted(con, events, self.content_sources)
            ok = [r["record_id"] for r, f in zip(rows, flags, strict=True) if f]
        return pa.table({"record_id": pa.array(ok, pa.string())}), refused

    @staticmethod
    def _new_rows(table: pa.Table | None, key: str, recent: _RecentSpans) -> pa.Table | None:
        """The rows of ``table`` whose ``key`` this collector has not stored lately (None: none)."""
        if table is None or not table.num_rows:
            return None
        fresh = [i not in recent for i in table.column(key).to_pylist()]
        if not any(fresh):
            return None
        return table if all(fresh) else table.filter(pa.array(fresh, pa.bool_()))

    @staticmethod
    def _commit(con: duckdb.DuckDBPyConnection, sql: str) -> None:
        """Run one transaction's statements, again after a conflict (a commit that keeps conflicting
        fails: the writer answers 503, the exporter retries)."""
        for attempt in range(CONFLICT_RETRIES + 1):
            try:
                con.execute(sql)
                return
            except duckdb.TransactionException:
                rollback(con)
                if attempt == CONFLICT_RETRIES:
                    raise
                time.sleep(0.01 * (2**attempt))
            except BaseException:
                rollback(con)
                raise

    def _attach(self, sql: str) -> None:
        """Attach the lake. Collectors that start on a new catalog at the same moment each create its
        tables, and all but one fail on PostgreSQL's unique index of type names: they attach again
        once the catalog exists."""
        from collector.store import lake_ddl

        try:
            lake_ddl.idempotent(
                lambda: self.con.execute(sql),
                what="the lake's catalog",
                retry_if=lambda exc: "initialize DuckLake" in str(exc) or lake_ddl.made_meanwhile(exc),
                attempts=ATTACH_ATTEMPTS,
            )
        except duckdb.Error as exc:
            raise ConfigError(
                f"cannot attach the lake at {_redact(self.catalog)}: {_first_line(exc)}"
            ) from exc

    def _create(self) -> None:
        for table, columns in span_table_columns().items():
            raw = RAW_TABLES[table]
            cols = ", ".join(f"{c} {t}{' NOT NULL' if nn else ''}" for c, t, nn in columns)
            _ddl_retrying(self.con, f"CREATE TABLE IF NOT EXISTS {raw} ({cols})")
            have = {r[0] for r in self.con.execute(f"DESCRIBE {raw}").fetchall()}
            for c, t, _ in columns:  # a later migration's column
                if c not in have:
                    _ddl_retrying(self.con, f"ALTER TABLE {raw} ADD COLUMN IF NOT EXISTS {c} {t}")
        # settling's and evaluation's tables, the file store's others, the views over all of them
        from collector.store import lake_schema

        lake_schema.create(self.con, VIEWS)
        self._compress()

    def _compress(self) -> None:
        """The Parquet files of the raw tables, the state tables (``lake_schema.STATE_TABLES``) and
        the signal tables are written ZSTD-compressed (DuckLake's default is Snappy): the spans'
        attributes, where every document and the prompt are, take 2.5 times fewer bytes. Set once per
        table, kept in the catalog; a value set there by hand is left as it is."""
        from collector.store.lake_schema import SIGNAL_TABLES, STATE_TABLES

        have = {
            str(r[0])
            for r in self.con.execute(
                f"SELECT scope_entry FROM {LAKE}.options() WHERE option_name = 'parquet_compression' "
                "AND scope = 'TABLE'"
            ).fetchall()
        }
        missing = [
            f"CALL {LAKE}.set_option('parquet_compression', 'zstd', table_name => '{table}')"
            for table in (*RAW_TABLES.values(), *STATE_TABLES, *SIGNAL_TABLES)
            if not any(entry == table or entry.endswith(f".{table}") for entry in have)
        ]
        if missing:  # one catalog transaction (each DDL alone is a commit of its own)
            _ddl_retrying(self.con, ";\n".join(["BEGIN TRANSACTION", *missing, "COMMIT"]))

    # --- the surface the writer and the readers use -------------------------------------------

    def cursor(self) -> duckdb.DuckDBPyConnection:
        """A new connection to the same instance, reading the lake (a cursor starts in ``memory``)."""
        cur = self.con.cursor()
        cur.execute(f"USE {LAKE}")
        return opened(cur, lake=True)

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
        from collector.store import lake_claims

        with self._watching:
            cur = self.con.cursor()
            try:
                freed = lake_claims.freed(cur)
            finally:
                cur.close()
            new, self._freed_seen = freed - self._freed_seen, freed
        kinds = {kind for kind, _, _ in new}
        if kinds:
            for listener in list(self.claim_listeners):
                listener(kinds)

    # --- writes -------------------------------------------------------------------------------

    def write_spans(self, con: duckdb.DuckDBPyConnection, batch: ArrowBatch | SpanBatch) -> int:
        """Append the batch's new spans (with their steps and documents) in one transaction; returns
        how many were new. The first copy of a span repeated in the batch is kept, and a span this
        collector committed lately is dropped. A commit that keeps conflicting fails (the writer
        answers 503, the exporter retries)."""
        if isinstance(batch, SpanBatch):
            batch = batch_to_arrow(batch)
        if not len(batch):
            return 0
        recent = self._recent
        keys = [
            t + s
            for t, s in zip(
                batch.spans.column("trace_id").to_pylist(),
                batch.spans.column("span_id").to_pylist(),
                strict=True,
            )
        ]
        new = [k for k in dict.fromkeys(keys) if k not in recent]
        if not new:
            return 0
        inputs = _Inputs()
        inputs.register(con)
        inputs.set(batch)
        if len(new) < len(keys):
            con.register(
                "_new", pa.table({"trace_id": [k[:32] for k in new], "span_id": [k[32:] for k in new]})
            )
        try:
            self._commit(con, self._append_sql(bool(batch.docs.num_rows), every=len(new) == len(keys)))
        finally:
            for name in ("_in_spans", "_in_steps", "_in_docs", "_in_traces", "_new"):
                try:
                    con.unregister(name)
                except duckdb.Error:
                    pass
        with self._lock:
            self._recent.add(new)
        return len(new)

    @staticmethod
    def _append_sql(docs: bool, *, every: bool) -> str:
        statements = []
        for table, source, columns in (
            ("span_rows", "_in_spans", SPAN_COLUMNS),
            ("step_rows", "_in_steps", STEP_COLUMNS),
            *([("step_document_rows", "_in_docs", DOC_COLUMNS)] if docs else []),
        ):
            cols = ", ".join(columns)
            if every:
                statements.append(f"INSERT INTO {table} ({cols}) SELECT {cols} FROM {source}")
                continue
            # some spans are dropped (stored lately, or repeated in the batch): the first copy of each new one
            key = "trace_id, span_id" if table != "step_document_rows" else _DOC_KEY
            statements.append(
                f"INSERT INTO {table} ({cols}) SELECT DISTINCT ON ({key}) {cols} FROM {source} "
                "WHERE (trace_id, span_id) IN (SELECT trace_id, span_id FROM _new)"
            )
        return ";\n".join(["BEGIN TRANSACTION", *statements, "COMMIT"])

    def _remember_recent(self) -> None:
        """At start: the span keys, log record ids and metric point ids the lake received in the last
        ``RECENT_WINDOW_MINUTES`` (from any collector), so a restarted collector does not store a
        re-sent one twice."""
        since = dt.datetime.now(dt.UTC).replace(tzinfo=None) - dt.timedelta(minutes=RECENT_WINDOW_MINUTES)
        for key, table, recent in (
            ("trace_id || span_id", "span_rows", self._recent),
            ("record_id", "log_records", self._recent_logs),
            ("point_id", "metric_points", self._recent_points),
        ):
            rows = self.con.execute(
                f"SELECT {key} FROM {table} WHERE received_at >= ? LIMIT ?", [since, recent.size]
            ).fetchall()
            recent.add(r[0] for r in rows)

    # --- maintenance --------------------------------------------------------------------------

    def compact_duplicates(self, con: duckdb.DuckDBPyConnection | None = None) -> dict[str, int]:
        """Delete the second and later copies of each span from the raw tables, and of each log record
        and metric point (one transaction); returns the rows deleted per table. Run it in one process at a time: two running at once
        conflict, and the loser is rolled back (nothing is lost; it deletes nothing)."""
        con = con or self.cursor()
        keys = {
            "span_rows": ("trace_id, span_id", "received_at, rowid"),
            "step_rows": ("trace_id, span_id", "rowid"),
            "step_document_rows": (_DOC_KEY, "received_at, rowid"),
            "log_records": ("record_id", "received_at, rowid"),
            "metric_points": ("point_id", "received_at, rowid"),
        }
        deleted: dict[str, int] = {}
        con.execute("BEGIN TRANSACTION")
        try:
            for table, (partition, order) in keys.items():
                row = con.execute(
                    f"DELETE FROM {table} WHERE rowid IN (SELECT rowid FROM (SELECT rowid, row_number() "
                    f"OVER (PARTITION BY {partition} ORDER BY {order}) AS n FROM {table}) WHERE n > 1)"
                ).fetchone()
                deleted[table] = int(row[0]) if row else 0
            con.execute("COMMIT")
        except BaseException:
            rollback(con)
            raise
        return deleted


def _redact(url: str) -> str:
    """The catalog URL without its password (for logs and errors)."""
    return re.sub(r"(://[^:/@]+):[^@]*@", r"\1:***@", url)
