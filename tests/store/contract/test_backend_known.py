"""A store knows its backend when it is opened: the handles it gives out (its connection, every
cursor) answer ``backend.is_lake`` without a query, on every backend; a handle no store gave out is
asked once and remembered."""

from __future__ import annotations

from typing import Any

import duckdb
import pytest

from collector.store import backend as backends
from collector.store.backend import is_lake
from collector.store.settling import ready_traces, waiting_traces
from tests.store.contract.stored import T0


def test_a_stores_handles_answer_without_a_query(backend: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    lake = type(backend).__name__ == "LakeStore"
    asked: list[object] = []

    def wrong(tx: duckdb.DuckDBPyConnection) -> bool:
        asked.append(tx)
        return not lake

    monkeypatch.setattr(backends, "probe", wrong)
    cur = backend.cursor()
    try:
        assert is_lake(backend.con) is lake
        assert is_lake(cur) is lake
        # the operations that branch on it take their backend's path (a lake's claims its rows)
        assert ready_traces(cur, settled=T0, expired=T0, limit=10) == []
        assert waiting_traces(cur, 10) == []
    finally:
        cur.close()
    assert asked == []


def test_a_handle_no_store_gave_out_is_asked_once(backend: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    lake = type(backend).__name__ == "LakeStore"
    asked: list[object] = []
    real = backends.probe

    def counted(tx: duckdb.DuckDBPyConnection) -> bool:
        asked.append(tx)
        return real(tx)

    monkeypatch.setattr(backends, "probe", counted)
    made = backend.cursor().cursor()  # a cursor of a cursor: not one the store handed out
    try:
        assert is_lake(made) is lake
        assert is_lake(made) is lake
    finally:
        made.close()
    assert asked == [made]
    plain = duckdb.connect()
    try:
        assert is_lake(plain) is False
    finally:
        plain.close()
