"""The settler, the lake's maintenance and the gRPC receiver are components like the others: found
through the entry points, started right after the core (the settler) and last (the gRPC receiver,
which stops first), and left out of a server whose component list does not name them."""

from __future__ import annotations

import logging
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from collector.components import Component, Context, installed, undeclared_built_ins
from collector.maintenance.retention import RetentionService
from collector.receivers.otlp_grpc import COMPONENT as GRPC
from collector.receivers.otlp_grpc import GrpcReceiver
from collector.runtime import Runtime
from collector.settling.settle import Settler
from collector.settling.settle_service import COMPONENT as SETTLER
from collector.store.maintenance import maintainer
from evaluators.service.scheduler import EvaluationService
from ragfault.server import ServerThread
from ragfault.ui.api import FactsKeeper
from ragfault.ui.live import LiveGauges
from ragfault_core.errors import ConfigError
from tests.conftest import make_settings
from tests.otel_helpers import grpc_provider, http_provider
from tests.served import api_client
from tests.tracegen import rag_trace
from tests.waiting import wait_equal, wait_until

DOCS = [{"id": "d1", "content": "Refunds are accepted within 30 days of purchase."}]


def listening(port: int) -> bool:
    """Whether something accepts connections on 127.0.0.1:``port``."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


class Watcher:
    """A component's service between the built-ins and the gRPC receiver: what it finds running
    when it starts and when it stops."""

    seen: list[tuple[str, dict[str, Any]]] = []

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx

    def look(self) -> dict[str, Any]:
        settler = self.ctx.settler
        return {
            "settler": settler is not None and settler is self.ctx.find(Settler),
            "settling": settler is not None and settler._thread.is_alive(),
            "evaluation": self.ctx.find(EvaluationService) is not None,
            "grpc_port": self.ctx.grpc_port,
            "grpc_listening": listening(self.ctx.settings.grpc_port),
        }

    def start(self) -> None:
        Watcher.seen.append(("start", self.look()))

    def stop(self) -> None:
        Watcher.seen.append(("stop", self.look()))


WATCHER = Component("watcher", service=Watcher, order=500)


@pytest.fixture
def seen() -> Iterator[list[tuple[str, dict[str, Any]]]]:
    Watcher.seen.clear()
    yield Watcher.seen
    Watcher.seen.clear()


def api(thread: ServerThread) -> Any:
    return api_client(f"http://127.0.0.1:{thread.http_port}")


def sql(client: Any, query: str, **params: Any) -> list[list[Any]]:
    r = client.post("/api/v1/sql", json={"sql": query, "params": params})
    assert r.status_code == 200, r.text
    rows: list[list[Any]] = r.json()["rows"]
    return rows


def settled(client: Any, trace_id: str) -> bool:
    rows = sql(client, "SELECT settled_at IS NOT NULL FROM traces WHERE trace_id = $t", t=trace_id)
    return bool(rows and rows[0][0])


def send(provider: Any, query: str) -> str:
    """One RAG trace through a real exporter; its trace id once the exporter has sent it."""
    trace_id = rag_trace(provider.get_tracer("tests"), query=query, answer="Within 30 days.", candidates=DOCS)
    assert provider.force_flush(10_000)
    provider.shutdown()
    return trace_id


def test_the_installed_server_starts_the_settler_first_and_the_grpc_receiver_last(
    tmp_path: Path, seen: list[tuple[str, dict[str, Any]]]
) -> None:
    names = [c.name for c in installed()]
    assert names[:2] == ["settler", "lake_maintenance"] and names[-1] == "grpc"
    assert names.index("lake_maintenance") < names.index("evaluation")
    settings = make_settings(tmp_path)
    thread = ServerThread(settings, [*installed(), WATCHER]).start()
    client = api(thread)
    try:
        rt = thread.runtime
        # the file store: no lake maintenance (its component runs on ducklake only)
        assert [c.name for c in rt.components] == [
            "settler", "retention", "coverage", "evaluation", "judge", "experiments", "ui", "live_gauges",
            "watcher", "grpc",
        ]  # fmt: skip
        kinds = [type(s) for s in rt.extensions]
        assert kinds == [
            Settler,
            RetentionService,
            EvaluationService,
            FactsKeeper,
            LiveGauges,
            Watcher,
            GrpcReceiver,
        ]
        # started after the settler and the scheduler, before the gRPC receiver bound its port
        assert seen == [
            ("start", {"settler": True, "settling": True, "evaluation": True, "grpc_port": None,
                       "grpc_listening": False}),
        ]  # fmt: skip
        assert rt.grpc_port == settings.grpc_port and listening(settings.grpc_port)
        # spans over gRPC (the real exporter), assembled by the settler the writer wakes
        trace_id = send(grpc_provider(f"127.0.0.1:{rt.grpc_port}"), "How long do refunds take?")
        wait_until(lambda: settled(client, trace_id), what=f"trace {trace_id} settled")
        assert rt.settler is not None and rt.settler.settled_total >= 1
    finally:
        client.close()
        thread.stop()
    # the gRPC receiver stopped first, the settler after the services started after it
    assert seen[1] == (
        "stop",
        {"settler": True, "settling": True, "evaluation": True, "grpc_port": settings.grpc_port,
         "grpc_listening": False},
    )  # fmt: skip
    assert not listening(settings.grpc_port)


def test_a_server_without_the_grpc_component_receives_over_http_only(tmp_path: Path) -> None:
    settings = make_settings(tmp_path)
    thread = ServerThread(settings, [c for c in installed() if c.name != GRPC.name]).start()
    client = api(thread)
    try:
        rt = thread.runtime
        assert rt.grpc_port is None and rt.find(GrpcReceiver) is None
        assert not listening(settings.grpc_port)
        assert client.get("/api/v1/ui/overview").status_code == 200  # the rest of the server runs
        trace_id = send(http_provider(f"http://127.0.0.1:{thread.http_port}"), "Refund window?")
        wait_until(lambda: settled(client, trace_id), what=f"trace {trace_id} settled")
    finally:
        client.close()
        thread.stop()


def test_start_without_grpc_runs_every_other_component(tmp_path: Path) -> None:
    settings = make_settings(tmp_path)
    rt = Runtime(settings)  # the installed components: the default a runtime is built with
    assert [c.name for c in rt.components][0] == SETTLER.name and GRPC in rt.components
    rt.start(grpc=False)
    try:
        assert rt.ready and rt.grpc_port is None and not listening(settings.grpc_port)
        assert rt.settler is not None and rt.find(EvaluationService) is not None
    finally:
        rt.stop()


def test_a_component_list_without_the_settler_stores_spans_and_says_it_assembles_none(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    settings = make_settings(tmp_path)
    with caplog.at_level(logging.WARNING, logger="ragfault"):
        thread = ServerThread(settings, [GRPC]).start()
    client = api(thread)
    try:
        rt = thread.runtime
        assert rt.settler is None and [type(s) for s in rt.extensions] == [GrpcReceiver]
        assert "no settler component" in caplog.text
        trace_id = send(grpc_provider(f"127.0.0.1:{rt.grpc_port}"), "Refunds?")
        # received and stored, never assembled: the trace's row counts its spans and no settle
        wait_equal(
            lambda: sql(
                client, "SELECT span_count > 0, settled_at FROM traces WHERE trace_id = $t", t=trace_id
            ),
            [[True, None]],
            what="the trace's spans stored",
        )
        assert client.post("/api/v1/evaluate", json={}).status_code == 404  # no evaluation component
    finally:
        client.close()
        thread.stop()


def test_lake_maintenance_runs_on_a_lake_only(tmp_path: Path) -> None:
    """The factory makes nothing on a file store (its ``stores`` keep it off one anyway); the lake
    servers of ``tests/store/lake/`` run it."""
    rt = Runtime(make_settings(tmp_path), components=[])
    try:
        assert maintainer(rt) is None
    finally:
        rt.store.close()


def test_a_stale_install_that_lacks_a_declared_component_fails_at_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    loaded = ["collector.settling.settle_service:COMPONENT", "collector.receivers.otlp_grpc:COMPONENT"]
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text(
        '[project.entry-points."ragfault.components"]\n'
        'settler = "collector.settling.settle_service:COMPONENT"\n'
        'grpc = "collector.receivers.otlp_grpc:COMPONENT"\n'
        'newer = "collector.newer:COMPONENT"\n',
        encoding="utf-8",
    )
    monkeypatch.setattr("collector.components.SOURCE_PYPROJECT", pyproject)
    assert undeclared_built_ins(loaded) == ["newer"]
    # the installed metadata lists an older server than the source declares: refused, not run short
    with pytest.raises(ConfigError, match=r"lacks the component\(s\) \['newer'\].*pip install -e"):
        installed()
    with pytest.raises(ConfigError, match="pip install -e"):
        ServerThread(make_settings(tmp_path))
    monkeypatch.setattr("collector.components.SOURCE_PYPROJECT", tmp_path / "absent.toml")
    assert undeclared_built_ins([]) == []  # an installed wheel: its metadata is the declaration
