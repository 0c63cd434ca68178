"""What the writer needs of a store, whichever backend it is (``duck.Store``, ``lake.LakeStore``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

import duckdb

from collector.batch import ArrowBatch, SpanBatch

Tx = duckdb.DuckDBPyConnection
"""The handle a store operation runs on: a writer job's connection (inside its transaction) or a
reader's cursor. Code outside ``collector/store/`` names this type and calls the store's
operations with it; it never imports ``duckdb`` or writes backend SQL itself."""


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

    def checkpoint_if_idle(self, con: duckdb.DuckDBPyConnection, min_bytes: int = ...) -> bool: ...

    def write_signals(self, con: duckdb.DuckDBPyConnection, batch: ArrowBatch) -> tuple[int, int]: ...

    def note_failure(self, exc: BaseException) -> None: ...

    def note_success(self) -> None: ...

    def close(self) -> None: ...
