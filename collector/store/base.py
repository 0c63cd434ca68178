"""What the writer needs of a store, whichever backend it is (``file.store.Store``, ``lake.store.LakeStore``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Concatenate, ParamSpec, Protocol, TypeVar, cast

import duckdb
import pyarrow as pa

from collector.ingest.batch import ArrowBatch, SpanBatch

Con = duckdb.DuckDBPyConnection
"""The backend's own connection, for code inside ``collector/store/`` only: a writer job's connection
(inside its transaction) or a reader's cursor, on which the store runs its statements."""


class Tx(Protocol):
    """The handle code outside ``collector/store/`` holds: the same connection, typed opaque. It has
    no methods a caller may use: it is only passed back to the store's operations (the functions
    marked ``@operation``), so nothing outside the store runs a statement or learns the backend.
    A ``Con`` is a ``Tx`` (a job or a cursor the store hands out is passed on as one); a ``Tx`` is
    not a ``Con``, which the type checker enforces."""


LAZY_PARAMETER_RELATIONS = int(duckdb.__version__.split(".")[0]) >= 2
"""Whether a relation made with parameters (``con.sql(text, params=...)``) runs only when its rows
are read. Before DuckDB 2 making it ran the statement, and reading its rows ran it again, without the
parameters' filters pushed into the scans (at 1,000,000 traces a window of the evaluation log took
110 ms that way, 14 ms run once); from DuckDB 2 it is lazy, and a DB-API result's Arrow output copies
the rows. ``arrow_rows`` and ``arrow_batches`` take the way that runs the statement once."""


class NoRows(ValueError):
    """A statement given for its rows returns no result (it is not a query)."""


def _run_once(con: Con, text: str, params: Mapping[str, Any] | None) -> Con | duckdb.DuckDBPyRelation:
    """What to read one statement's rows from so that it runs once (``LAZY_PARAMETER_RELATIONS``): the
    connection having run it, or the relation that runs it when read."""
    if params and not LAZY_PARAMETER_RELATIONS:
        return con.execute(text, dict(params))
    return con.sql(text, params=dict(params) if params else None)


def arrow_rows(con: Con, text: str, params: Mapping[str, Any] | None = None) -> pa.Table:
    """The rows of one statement as an Arrow table, the statement run once."""
    table = _run_once(con, text, params).to_arrow_table()
    if table is None:
        raise NoRows("the statement returns no rows")
    return table


def arrow_batches(
    con: Con, text: str, params: Mapping[str, Any] | None, batch_rows: int
) -> pa.RecordBatchReader:
    """The rows of one statement streamed in Arrow record batches of at most ``batch_rows``, the
    statement run once."""
    reader = _run_once(con, text, params).to_arrow_reader(batch_rows)
    if reader is None:
        raise NoRows("the statement returns no rows")
    return reader


_P = ParamSpec("_P")
_R = TypeVar("_R")


def operation(fn: Callable[Concatenate[Con, _P], _R]) -> Callable[Concatenate[Tx, _P], _R]:
    """Mark a store function as an operation code outside the store calls with its opaque ``Tx``.
    Costs nothing at run time (the function itself is returned): the handle is the connection; the
    mark only types the first parameter as the opaque handle for callers."""
    return cast("Callable[Concatenate[Tx, _P], _R]", fn)


QueryFn = Callable[[str, dict[str, Any]], dict[str, Any]]
"""The other handle of a read: a function that runs one read-only statement with its parameters
and answers ``{"columns", "rows", ...}`` — the server's SQL API or a file opened read-only, as the
CLI chooses. A store read that must work on both takes this instead of a ``Tx``."""


def instance_config(memory_limit: str | None = None, threads: int | None = None) -> dict[str, Any]:
    """The settings every backend opens its DuckDB instance with: no extension installed or loaded
    behind its back (a lake loads its own explicitly), and the memory and threads asked for."""
    config: dict[str, Any] = {
        "autoinstall_known_extensions": False,
        "autoload_known_extensions": False,
        "allow_community_extensions": False,
    }
    if memory_limit:
        config["memory_limit"] = memory_limit
    if threads:
        config["threads"] = threads
    return config


class Faults:
    """A store's fault bookkeeping, which the writer and ``/healthz`` read: why it cannot write now
    (``fault``, or None), whether its database is lost to this process (``fatal``: only a new process
    can open it again), and who is told once it is (``on_fatal``). Each backend says in its own
    ``note_failure`` what a failure means."""

    def __init__(self) -> None:
        self.fault: str | None = None
        self.fatal = False
        self.on_fatal: list[Callable[[str], None]] = []

    def note_success(self) -> None:
        if not self.fatal:
            self.fault = None

    def _fail(self, fault: str, *, fatal: bool = False) -> None:
        """Remember ``fault``; a first fatal one is told to every ``on_fatal`` hook."""
        first = fatal and not self.fatal
        self.fatal = self.fatal or fatal
        self.fault = fault
        if first:
            for hook in self.on_fatal:
                hook(fault)


def is_file_error(exc: BaseException) -> bool:
    """Whether the backend failed on its files (missing, unreadable, locked by another process, no
    permission): a command says so in one line instead of a traceback."""
    return isinstance(exc, (duckdb.IOException, duckdb.PermissionException))


class SpanStore(Protocol):
    read_only: bool
    path: str
    fault: str | None
    fatal: bool
    on_fatal: list[Callable[[str], None]]

    def cursor(self) -> duckdb.DuckDBPyConnection: ...

    def write_spans(self, con: duckdb.DuckDBPyConnection, batch: ArrowBatch | SpanBatch) -> int: ...

    def wal_bytes(self) -> int: ...

    def checkpoint_if_idle(self, con: duckdb.DuckDBPyConnection, min_bytes: int = ...) -> bool: ...

    def write_signals(self, con: duckdb.DuckDBPyConnection, batch: ArrowBatch) -> tuple[int, int]: ...

    def note_failure(self, exc: BaseException) -> None: ...

    def note_success(self) -> None: ...

    def close(self) -> None: ...
