"""Shared fixtures: a real ragfault server on free ports with its own DuckDB file."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from collector.config import ServerSettings
from ragfault.server import ServerThread
from tests.served import api_client
from tests.served import free_port as free_port  # (tests import it from here too)
from tests.served import free_ports as free_ports
from tests.store import lake_run
from tests.waiting import wait_equal, wait_until


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
    http_port, grpc_port = free_ports(2)
    values: dict[str, Any] = {
        "db": str(tmp_path / "ragfault.duckdb"),
        "http_port": http_port,
        "grpc_port": grpc_port,
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
        rows: list[list[Any]] = r.json()["rows"]
        return rows

    def scalar(self, query: str, **params: Any) -> Any:
        return self.sql(query, **params)[0][0]

    def wait_for(self, query: str, expected: Any, timeout: float = 20, **params: Any) -> Any:
        """Until ``query``'s first value is ``expected`` (the server gets there in its own threads)."""
        return wait_equal(lambda: self.scalar(query, **params), expected, what=repr(query), timeout=timeout)

    def wait_rows(
        self, query: str, ok: Callable[[list[list[Any]]], object] = bool, timeout: float = 30, **params: Any
    ) -> list[list[Any]]:
        """Until ``query``'s rows satisfy ``ok`` (by default: until there is a row); returns them."""
        return wait_until(lambda: self.sql(query, **params), ok, what=repr(query), timeout=timeout)

    def settle(self) -> int:
        """Assemble every trace that has spans not yet assembled, now (no waiting for the settle time)."""
        settler = self.runtime.settler
        assert settler is not None, "this server does not settle (its component list has no settler)"
        n = 0
        while True:
            k = settler.run_once(force=True)
            n += k
            if not k:
                return n

    def stop(self) -> None:
        self.http.close()
        self.thread.stop()


class StartServer:
    """The one way a test starts an in-process server: ``start_server(**settings)`` gives a
    :class:`Server` on :func:`make_settings` with those overrides, and every server started is stopped
    when the fixture ends (a test may stop one earlier, e.g. to open its store again). ``store`` names
    a subdirectory, for a test that runs two servers on two stores; the same name is the same store."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.started: list[Server] = []

    def __call__(self, store: str = "", **overrides: Any) -> Server:
        tmp = self.root / store if store else self.root
        tmp.mkdir(parents=True, exist_ok=True)
        srv = Server(make_settings(tmp, **overrides))
        self.started.append(srv)
        return srv

    def stop_all(self) -> None:
        """Last started first; one that fails to stop does not leave the others running."""
        while self.started:
            srv = self.started.pop()
            try:
                srv.stop()
            finally:
                if self.started:
                    self.stop_all()


@pytest.fixture
def start_server(tmp_path: Path) -> Iterator[StartServer]:
    """Servers for one test, in its ``tmp_path``."""
    servers = StartServer(tmp_path)
    try:
        yield servers
    finally:
        servers.stop_all()


@pytest.fixture(scope="module")
def start_module_server(
    tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Iterator[StartServer]:
    """Servers a whole test module shares (for a module-scoped fixture that loads data once)."""
    servers = StartServer(tmp_path_factory.mktemp(request.module.__name__.rpartition(".")[2]))
    try:
        yield servers
    finally:
        servers.stop_all()


def pytest_configure(config: pytest.Config) -> None:
    """Registered, so a misspelt marker is an error under ``--strict-markers``."""
    config.addinivalue_line(
        "markers", "server_settings(**overrides): the settings the `server` fixture starts its server with"
    )


@pytest.fixture
def server(start_server: StartServer, request: pytest.FixtureRequest) -> Server:
    """A server with the test defaults, or with ``@pytest.mark.server_settings(...)``'s overrides."""
    marker = request.node.get_closest_marker("server_settings")
    return start_server(**(marker.kwargs if marker else {}))
