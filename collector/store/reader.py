"""Read-only SQL for users: one SELECT, a row cap, a time limit, inside a READ ONLY transaction.

Three layers refuse what is not a plain read: the statement type (only SELECT), a read-only
transaction (no writes even from a SELECT with side effects), and the instance sandbox set in
``duck.sandbox`` (no file or network access, no extension loading, no settings changes).
"""

from __future__ import annotations

import datetime as dt
import decimal
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

import duckdb
import pyarrow as pa

from collector.store import sqlguard
from collector.store.base import NoRows, QueryFn, arrow_batches
from collector.store.templates import fill, statement_body
from collector.store.tx import rollback
from ragfault_core.errors import QueryRefused, QueryResultTooLarge, QueryTimeout

ALLOWED = {duckdb.StatementType.SELECT}
BATCH_ROWS = 256  # rows fetched from DuckDB at a time
TABLE_BATCH_ROWS = 8192  # the same, for a caller that keeps them as Arrow (select_table)


@dataclass
class QueryResult:
    columns: list[str]
    types: list[str]
    rows: list[list[Any]]
    truncated: bool

    def as_dict(self) -> dict[str, Any]:
        return {"columns": self.columns, "types": self.types, "rows": self.rows, "truncated": self.truncated}


def check_statement(con: duckdb.DuckDBPyConnection, sql: str) -> None:
    try:
        statements = con.extract_statements(sql)
    except duckdb.Error as exc:
        raise QueryRefused(f"cannot parse SQL: {exc}") from exc
    if len(statements) != 1:
        raise QueryRefused(f"exactly one statement is allowed, got {len(statements)}")
    kind = statements[0].type
    if kind not in ALLOWED:
        raise QueryRefused(f"only SELECT statements are allowed, got {kind.name}")


def jsonable(value: Any) -> Any:
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, (dt.datetime, dt.date, dt.time)):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        return value.total_seconds()
    if isinstance(value, decimal.Decimal):
        return float(value)
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    return str(value)


def _column(values: pa.ChunkedArray | pa.Array, duck_type: str) -> list[Any]:
    """One Arrow column as JSON-ready values (as ``fetchall`` would give them, then ``jsonable``)."""
    out = values.to_pylist()
    kind = values.type
    if pa.types.is_map(kind):
        out = [None if v is None else {str(k): x for k, x in v} for v in out]
    elif pa.types.is_interval(kind):
        out = [None if v is None else (v.months * 30 + v.days) * 86_400 + v.nanoseconds / 1e9 for v in out]
    elif pa.types.is_decimal(kind) and duck_type in ("HUGEINT", "UHUGEINT"):
        return [None if v is None else int(v) for v in out]
    return [jsonable(v) for v in out]


def _json_rows(part: pa.RecordBatch | pa.Table, types: list[str]) -> list[list[Any]]:
    """Arrow rows as lists of JSON-ready values (``_column``; ``types``: the columns' DuckDB types)."""
    cols = [_column(part.column(i), types[i]) for i in range(part.num_columns)]
    return list(map(list, zip(*cols, strict=True))) if cols else [[] for _ in range(part.num_rows)]


_BINDING_ERRORS = (duckdb.BinderException, duckdb.ParserException, duckdb.CatalogException)


def _located(
    con: duckdb.DuckDBPyConnection, sql: str, params: dict[str, Any] | None, exc: duckdb.Error
) -> str:
    """The error with DuckDB's ``LINE n: ...`` and caret lines. The relation API (``con.sql``) leaves
    them out of a binding error; binding the statement again through ``execute`` gives them, and a
    statement that does not bind never runs."""
    text = str(exc)
    if "\nLINE " in text or not isinstance(exc, _BINDING_ERRORS):
        return text
    rollback(con)
    try:
        con.execute("BEGIN TRANSACTION READ ONLY")
        con.execute(sql, params or None)
    except duckdb.Error as again:
        if type(again) is type(exc):
            return str(again)
    return text


def _too_large(max_bytes: int | None, max_value_bytes: int | None, mark: str) -> QueryResultTooLarge:
    if mark == sqlguard.VALUE_MARK:
        return QueryResultTooLarge(
            f"a value built by the query would exceed {max_value_bytes or max_bytes} bytes "
            "(sql_max_value_bytes): repeat, lpad, rpad, range, generate_series and list_resize "
            "build at most that, and joining values (||, concat, list_concat) adds at most that to "
            "the widest of them; use FROM range(n) for rows"
        )
    return QueryResultTooLarge(
        f"the result exceeds {max_bytes} bytes (sql_max_result_bytes); "
        "select fewer rows or columns, or shorter values"
    )


def _shape(con: duckdb.DuckDBPyConnection, sql: str, params: dict[str, Any]) -> duckdb.DuckDBPyRelation:
    """The columns and types of one SELECT with parameters, without running it (``sql/reader/shape``;
    the user's text is put in uncached: ``fill`` makes one pass and searches nothing it put in)."""
    text = fill(statement_body("reader", "shape"), body=sql.rstrip().rstrip(";"))
    return con.sql(text, params=params)


def _batches(
    con: duckdb.DuckDBPyConnection, text: str, params: dict[str, Any] | None, batch_rows: int
) -> pa.RecordBatchReader:
    try:
        return arrow_batches(con, text, params or None, batch_rows)
    except NoRows as exc:
        raise QueryRefused(str(exc)) from exc


@contextmanager
def _guarded(
    con: duckdb.DuckDBPyConnection,
    sql: str,
    params: dict[str, Any] | None,
    timeout: float,
    max_bytes: int | None = None,
    max_value_bytes: int | None = None,
) -> Iterator[None]:
    """Within: a READ ONLY transaction on ``con`` that DuckDB is interrupted in after ``timeout``
    seconds, rolled back at the end; DuckDB's errors come out as ``QueryTimeout``,
    ``QueryResultTooLarge`` (the result guards' marks) or ``QueryRefused`` with the statement's
    location."""
    timer = threading.Timer(timeout, con.interrupt)
    con.execute("BEGIN TRANSACTION READ ONLY")
    timer.start()
    try:
        yield
    except duckdb.InterruptException as exc:
        raise QueryTimeout(f"query exceeded the {timeout:g} s time limit", retry_after=0) from exc
    except (pa.ArrowException, OSError, duckdb.InvalidInputException) as exc:
        # DuckDB's errors while streaming come through Arrow; the guards' through error()
        for mark in (sqlguard.RESULT_MARK, sqlguard.VALUE_MARK):
            if mark in str(exc):
                raise _too_large(max_bytes, max_value_bytes, mark) from exc
        if isinstance(exc, duckdb.InvalidInputException):
            if "read-only" in str(exc).lower() or "read only" in str(exc).lower():
                raise QueryRefused(f"refused: {exc}") from exc
            raise QueryRefused(f"{type(exc).__name__}: {exc}") from exc
        if "INTERRUPT" in str(exc):
            raise QueryTimeout(f"query exceeded the {timeout:g} s time limit", retry_after=0) from exc
        raise QueryRefused(str(exc)) from exc
    except duckdb.PermissionException as exc:
        raise QueryRefused(f"refused: {exc}") from exc
    except duckdb.Error as exc:
        if "read-only" in str(exc).lower() or "read only" in str(exc).lower():
            raise QueryRefused(f"refused: {exc}") from exc
        raise QueryRefused(f"{type(exc).__name__}: {_located(con, sql, params, exc)}") from exc
    finally:
        timer.cancel()
        rollback(con)  # a read-only transaction: nothing to keep


@dataclass
class TableResult:
    """A statement's rows kept as Arrow (``select_table``), with its columns' DuckDB types."""

    table: pa.Table
    types: list[str]
    truncated: bool

    def head(self, n: int) -> QueryResult:
        """The first ``n`` rows as ``run_select`` gives them: JSON-ready values."""
        part = self.table.slice(0, n)
        rows = _json_rows(part, self.types)
        return QueryResult(columns=part.column_names, types=self.types, rows=rows, truncated=self.truncated)


def select_table(
    con: duckdb.DuckDBPyConnection,
    sql: str,
    params: dict[str, Any] | None = None,
    *,
    row_cap: int,
    timeout: float = 30.0,
    clock: Callable[[], float] = time.monotonic,
) -> TableResult:
    """Run one read-only statement of the project's own on ``con`` as ``run_select`` does (a READ ONLY
    transaction, the time limit) and keep its first ``row_cap`` rows as Arrow, for a caller that adds
    the rows up or shows a few: converting every row to Python values costs more than running the
    statement."""
    started = clock()
    check_statement(con, sql)
    batches: list[pa.RecordBatch] = []
    truncated = False
    with _guarded(con, sql, params, timeout):
        shape = _shape(con, sql, params) if params else con.sql(sql)
        if shape is None:
            raise QueryRefused("the statement returns no rows")
        types = [str(t) for t in shape.types]
        reader = _batches(con, sql, params, TABLE_BATCH_ROWS)
        schema, n = reader.schema, 0
        for batch in reader:
            if n + batch.num_rows > row_cap:  # the rows beyond the cap are not read
                batch = batch.slice(0, row_cap - n)
                truncated = True
            batches.append(batch)
            n += batch.num_rows
            if clock() - started > timeout:
                raise duckdb.InterruptException("time limit")
            if truncated:
                break
        reader.close()
    return TableResult(pa.Table.from_batches(batches, schema=schema), types, truncated)


def run_select(
    con: duckdb.DuckDBPyConnection,
    sql: str,
    params: dict[str, Any] | None = None,
    *,
    row_cap: int = 10_000,
    timeout: float = 30.0,
    max_bytes: int | None = None,
    max_value_bytes: int | None = None,
    user: bool = False,
    clock: Callable[[], float] = time.monotonic,
) -> QueryResult:
    """Run one read-only statement on ``con`` (a cursor of its own) and fetch at most ``row_cap`` rows.

    Rows are streamed from DuckDB in Arrow batches of ``BATCH_ROWS``; fetching and converting them
    count against ``timeout``, and their Arrow bytes against ``max_bytes`` (``QueryResultTooLarge``
    once over it). ``user`` SQL is checked by ``sqlguard`` too: tables and views only; and with
    ``max_bytes`` it is rewritten so that DuckDB itself stops at ``max_bytes`` of rows, and builds
    no value wider than ``max_value_bytes`` (``sqlguard.cap_result`` / ``cap_values``): a vector of
    2,048 rows is otherwise held whole before its first row is counted here. ``clock`` measures
    the time spent between batches (DuckDB itself is interrupted by a timer)."""
    started = clock()
    check_statement(con, sql)
    if user:
        sqlguard.check(con, sql)
    size = 0
    rows: list[list[Any]] = []
    truncated = False
    with _guarded(con, sql, params, timeout, max_bytes, max_value_bytes):
        cap = max_bytes if user else None
        # the names and types: of a LIMIT 0 of a statement with parameters (a relation made with them
        # may be the statement run: base.LAZY_PARAMETER_RELATIONS); the rows: the statement run once
        shape = _shape(con, sql, params) if params else con.sql(sql)
        if shape is None:
            raise QueryRefused("the statement returns no rows")
        columns, types = list(shape.columns), [str(t) for t in shape.types]
        if cap is None and not params:
            reader = shape.to_arrow_reader(BATCH_ROWS)  # a relation without parameters runs when read
        else:
            text = sql
            if cap is not None:
                inner = sqlguard.cap_values(con, sql, max_value_bytes or cap)
                text = sqlguard.cap_result(inner, list(shape.types), cap)
            reader = _batches(con, text, params, BATCH_ROWS)
        for batch in reader:
            if len(rows) + batch.num_rows > row_cap:  # the rows beyond the cap are not read
                batch = batch.slice(0, row_cap - len(rows))
                truncated = True
            size += batch.nbytes
            if max_bytes is not None and size > max_bytes:
                raise _too_large(max_bytes, max_value_bytes, sqlguard.RESULT_MARK)
            rows.extend(_json_rows(batch, types))
            if clock() - started > timeout:
                raise duckdb.InterruptException("time limit")
            if truncated:
                break
        reader.close()
    return QueryResult(columns=columns, types=types, rows=rows, truncated=truncated)


# --- reading a batch of traces by the window of their receive times (migration 005) ---------------

Window = tuple[dt.datetime, dt.datetime] | None


def received_window(times: list[tuple[dt.datetime | None, dt.datetime | None]]) -> Window:
    """The received_at range covering traces given as (first_received_at, last_received_at); None
    when one is unknown. Every step and document of a trace was received in its range, and rows are
    stored in the order they are received, so a scan filtered on it skips the rest of the table."""
    if not times or any(f is None or la is None for f, la in times):
        return None
    return min(f for f, _ in times if f is not None), max(la for _, la in times if la is not None)


def window_params(window: Window) -> dict[str, Any]:
    """The ``$lo`` and ``$hi`` of a statement's received window (NULL for none: the statement's
    ``$lo IS NULL OR ...`` reads every row then). DuckDB binds the values before it plans, so a
    window still skips the row groups outside it (``tests/store/test_complete_statements.py``)."""
    if window is None:
        return {"lo": None, "hi": None}
    return {"lo": window[0], "hi": window[1]}


def window_sql(window: Window, column: str = "received_at") -> tuple[str, dict[str, Any]]:
    """An ``AND column BETWEEN $lo AND $hi`` filter for ``window`` and its parameters (none for None).
    The store's own statements take the window as parameters (``window_params``); this is kept for
    callers that still build such a filter."""
    if window is None:
        return "", {}
    return f" AND {column} BETWEEN $lo AND $hi", {"lo": window[0], "hi": window[1]}


# --- looking traces up by id, within the range their first spans were received in -----------------

_T = TypeVar("_T")


def first_received_range(
    received: Mapping[str, dt.datetime | None] | None, trace_ids: Iterable[str]
) -> Window:
    """The range of the traces' ``first_received_at`` from a mapping read with their ids (None when
    one is missing)."""
    if not received:
        return None
    times = []
    for t in trace_ids:
        at = received.get(t)
        if at is None:
            return None
        times.append(at)
    return (min(times), max(times)) if times else None


def traces_in_range(
    run: Callable[[dict[str, Any]], _T],
    found: Callable[[_T], int],
    merge: Callable[[_T, _T], _T],
    n_ids: int,
    hint: Window,
) -> _T:
    """Rows of ``traces`` looked up by trace id, scanning only the row groups whose
    ``first_received_at`` falls in ``hint`` (the range read with the ids) when there is one.

    A list of trace ids is looked up by scanning the whole table (the key index serves single ids
    only), which grows with every trace stored; the table is in the order traces were first
    received, so the range skips nearly all of it. A trace outside the range (its first span arrived
    after the ids were read, but had been received earlier) is still found: when the range yields
    fewer than ``n_ids`` rows, the rest of the table is read too.

    ``run(params)`` runs the statement with its ``$lo``, ``$hi`` (NULL: no range) and ``$outside``
    (the rows outside the range instead); ``found`` counts its rows; ``merge`` joins two results."""
    params: dict[str, Any] = {**window_params(hint), "outside": False}
    rows = run(params)
    if hint is None or found(rows) >= n_ids:
        return rows
    return merge(rows, run({**params, "outside": True}))


def cursor_query(con: duckdb.DuckDBPyConnection, row_cap: int = 10_000) -> QueryFn:
    """A ``QueryFn`` on a cursor of its own: each statement through ``run_select`` (read-only, at
    most ``row_cap`` rows), so a store read written for the query interface runs on a cursor too."""

    def run(sql: str, params: dict[str, Any]) -> dict[str, Any]:
        return run_select(con, sql, params, row_cap=row_cap).as_dict()

    return run
