"""Shared fixtures: a real ragfault server on free ports with its own DuckDB file."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from collector.config import ServerSettings
from ragfault.server import ServerThread
from tests.served import api_client, free_port
from tests.store import lake_run


def pytest_collection_finish(session: pytest.Session) -> None:
    """Start the lake set in its own environment now, if the suite will ask for it (see lake_run)."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return  # every worker collects every test: the controlling process starts the set (below)
    if any(item.nodeid == lake_run.NODE for item in session.items) and lake_run.needed():
        lake_run.RUN.start()


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_node_collection_finished(node: Any, ids: list[str]) -> None:
    """In the controlling process of a parallel run: start the lake set once a worker has collected
    its test, for that worker to read (see lake_run)."""
    if lake_run.NODE in ids and lake_run.needed():
        lake_run.RUN.start(share=lake_run.shared_result(node.workerinput["testrunuid"]))


def pytest_sessionfinish(session: pytest.Session) -> None:
    lake_run.RUN.stop()


def make_settings(tmp_path: Path, **overrides: Any) -> ServerSettings:
    values: dict[str, Any] = {
        "db": str(tmp_path / "ragfault.duckdb"),
        "http_port": free_port(),
        "grpc_port": free_port(),
        "settle_seconds": 0.3,
        "memory_limit": "1GB",
        # in-process decoding: a worker pool per test server costs startup time and memory;
        # tests/collector/test_decode_pool.py runs the pool path
        "decode_workers": 0,
    }
    values.update(overrides)
    return ServerSettings(**values)


class Server:
    """A running server and helpers to query it."""

    def __init__(self, settings: ServerSettings) -> None:
        self.settings = settings
        self.thread = ServerThread(settings).start()
        self.runtime = self.thread.runtime
        self.url = f"http://127.0.0.1:{settings.http_port}"
        self.grpc_endpoint = f"127.0.0.1:{self.runtime.grpc_port}"
        self.http = api_client(self.url)

    def sql(self, query: str, **params: Any) -> list[list[Any]]:
        r = self.http.post("/api/v1/sql", json={"sql": query, "params": params})
        assert r.status_code == 200, r.text
        return r.json()["rows"]

    def scalar(self, query: str, **params: Any) -> Any:
        return self.sql(query, **params)[0][0]

    def wait_for(self, query: str, expected: Any, timeout: float = 20, **params: Any) -> Any:
        deadline = time.monotonic() + timeout
        value = None
        while time.monotonic() < deadline:
            value = self.scalar(query, **params)
            if value == expected:
                return value
            time.sleep(0.05)
        raise AssertionError(f"{query!r} gave {value!r}, expected {expected!r}")

    def settle(self) -> int:
        """Assemble every trace that has spans not yet assembled, now (no waiting for the settle time)."""
        n = 0
        while True:
            k = self.runtime.settler.run_once(force=True)
            n += k
            if not k:
                return n

    def stop(self) -> None:
        self.http.close()
        self.thread.stop()


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    srv = Server(make_settings(tmp_path))
    try:
        yield srv
    finally:
        srv.stop()
