"""Opening the DuckDB file: one instance per process, its file attached with the store's row group
size, and sandboxed once migrated (no file or network access, no extension loading, configuration
locked). DuckDB allows one writing process per file; its settings are the instance's.
"""

from __future__ import annotations

import errno
import functools
import os
from typing import Any

import duckdb

from ragfault_core.errors import ConfigError, StoreUnavailable

# Rows a row group of the file's tables holds (DuckDB's default is 122,880). The checkpoint that
# completes a row group compresses all of it: with 122,880 rows of spans (about 30,000 four-span
# traces of attributes JSON) that one checkpoint held every write for 8-15 s on two cores, and the
# checkpoints before it rewrote ever more of the group being filled. At 16,384 the one that
# completes a group costs about a second, and the checkpoints of the same appends cost 8.7 s in all
# against 14.0; the bench's file takes a fifth more bytes a trace (dictionaries are kept per smaller
# segment), 0.30 of the raw OTLP against 0.25 (bench/README.md, 2026-12-04). On a store of 300,000
# traces, commits of 128 traces: the longest of 16 checkpoints 1.3 s against 27.6 (32,768: 2.5 s,
# 7 % less disk than this size), and the bundled queries take the same time. DuckDB takes the size
# as an option of ATTACH, not of the file: every open of the store must give it (``connect``), and
# a checkpoint by a process that did not merges the groups back.
ROW_GROUP_ROWS = 16_384


def disk_full(exc: BaseException) -> bool:
    return isinstance(exc, OSError) and exc.errno == errno.ENOSPC or "No space left on device" in str(exc)


def is_invalidated(exc: BaseException) -> bool:
    return isinstance(exc, duckdb.FatalException) or "database has been invalidated" in str(exc)


def full_message(path: str, exc: BaseException) -> str:
    if disk_full(exc):
        return f"cannot write database {path}: no space left on device; free space and start again"
    return f"cannot open database {path}: {str(exc).splitlines()[0]}"


@functools.cache
def has_operator_memory_limit() -> bool:
    """Whether this DuckDB bounds one query's operators (``operator_memory_limit``, DuckDB 2.x; the
    1.5 series that the DuckLake extensions are built for has no such setting)."""
    with duckdb.connect() as con:
        row = con.execute(
            "SELECT count(*) FROM duckdb_settings() WHERE name = 'operator_memory_limit'"
        ).fetchone()
    return bool(row and row[0])


def limit_operator_memory(con: duckdb.DuckDBPyConnection, limit: str) -> None:
    """Bound the sorts, joins and aggregates of the next queries on ``con`` (they spill past it);
    without the setting (DuckDB 1.5) the instance's ``memory_limit`` is the only bound."""
    if has_operator_memory_limit():
        con.execute(f"SET operator_memory_limit = '{limit}'")


def sandbox(con: duckdb.DuckDBPyConnection) -> None:
    """Lock the instance down: after this no statement can touch files, the network or settings."""
    con.execute("SET enable_external_access = false")
    if has_operator_memory_limit():
        # the settings a connection may still change: the SQL API bounds each user query's memory,
        # and keeps DuckDB to the calling threads while user queries run (``collector.api.routes``)
        con.execute("SET allowed_configs = ['operator_memory_limit', 'threads']")
    con.execute("SET lock_configuration = true")


def sibling(con: duckdb.DuckDBPyConnection) -> duckdb.DuckDBPyConnection:
    """A new connection to ``con``'s instance, in the database ``con`` uses (a DuckDB cursor starts in
    the instance's first database, not in the one a ``USE`` chose)."""
    row = con.execute("SELECT current_database()").fetchone()
    cur = con.cursor()
    if row is not None:
        cur.execute(f'USE "{row[0]}"')
    return cur


def connect(
    path: str, read_only: bool, config: dict[str, Any]
) -> tuple[duckdb.DuckDBPyConnection, str | None]:
    """A connection whose default database is the store's file, attached with ``ROW_GROUP_ROWS``
    rows a row group, and that database's name (named after the file, as ``duckdb.connect(path)``
    names it), which every cursor must ``USE``; None in memory, where the default is the store."""
    if path == ":memory:":
        return duckdb.connect(path, config=config), None
    con = duckdb.connect(":memory:", config=config)
    # TYPE DUCKDB: without it a name DuckDB reads as another format's ("notes.jsonl") was attached
    # as an empty in-memory database instead of being refused as not a DuckDB file
    options = "TYPE DUCKDB, " + ("READ_ONLY, " if read_only else "") + f"ROW_GROUP_SIZE {ROW_GROUP_ROWS}"
    if not read_only and not os.path.exists(path):
        # a new file in the newest storage format this DuckDB writes: DuckDB 1.x makes v1.0.0 files by
        # default, which keep every string over a few KB whole, so a resource of 10 KB cost 9.7 KB on
        # every span of it (bench/resource_copies.py); later formats compress those repeats to ~0. A
        # file already there keeps its format (schema.zstd_columns reads it)
        options += ", STORAGE_VERSION 'latest'"
    quoted = path.replace("'", "''")
    try:
        try:
            con.execute(f"ATTACH '{quoted}' ({options})")
        except duckdb.BinderException:  # the file is named like a database DuckDB has ("memory.duckdb")
            con.execute(f"ATTACH '{quoted}' AS store ({options})")
        row = con.execute(
            "SELECT database_name FROM duckdb_databases() WHERE NOT internal AND path IS NOT NULL"
        ).fetchone()
        if row is None:
            raise ConfigError(f"cannot open database {path}: it was not attached as a file")
        con.execute(f'USE "{row[0]}"')
    except BaseException:
        con.close()
        raise
    return con, row[0]


def open_file(
    path: str, read_only: bool, config: dict[str, Any]
) -> tuple[duckdb.DuckDBPyConnection, str | None]:
    """``connect``, its failures said in one line: a full disk is ``StoreUnavailable`` (the store may
    come back once space is freed), anything else about the file a ``ConfigError``."""
    try:
        return connect(path, read_only, config)
    except duckdb.IOException as exc:
        if disk_full(exc):
            raise StoreUnavailable(full_message(path, exc)) from exc
        if "not a valid DuckDB database file" in str(exc):
            raise ConfigError(f"cannot open database {path}: it is not a DuckDB database file") from exc
        raise ConfigError(f"cannot open database {path}: {exc}") from exc
    except (duckdb.CatalogException, duckdb.BinderException, duckdb.InvalidInputException) as exc:
        raise ConfigError(f"cannot open database {path}: {str(exc).splitlines()[0]}") from exc
