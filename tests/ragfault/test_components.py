"""The server is its list of components: every built-in one by default, found through the
``ragfault.components`` entry points as a third party's is, or the list a caller passes."""

from __future__ import annotations

import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from collector.components import GROUP, Component, for_store, installed
from collector.maintenance.retention import RetentionService
from collector.receivers.otlp_grpc import GrpcReceiver
from collector.settling.settle import Settler
from evaluators.service.scheduler import EvaluationService
from ragfault.server import ServerThread
from ragfault.settings import load_settings
from ragfault.ui.api import FactsKeeper
from ragfault.ui.live import LiveGauges
from ragfault_core.errors import ConfigError
from tests.conftest import StartServer, make_settings
from tests.ragfault import component_probe
from tests.ragfault.component_probe import Probe

ROOT = Path(__file__).resolve().parents[2]
# the settler first, the gRPC receiver last (tests/collector/test_core_components.py)
BUILT_IN = [
    "settler",
    "retention",
    "coverage",
    "evaluation",
    "judge",
    "experiments",
    "ui",
    "live_gauges",
    "grpc",
]
WITH_PROBE = [*BUILT_IN[:-1], "probe", "grpc"]  # a third party's (order 200) starts before the receiver


def distribution(root: Path, entries: dict[str, str]) -> Path:
    """A small installed distribution on ``root`` declaring ``entries`` in the components group."""
    info = root / "ragfault_probe-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: ragfault-probe\nVersion: 1.0\n", encoding="utf-8"
    )
    lines = [f"[{GROUP}]", *(f"{name} = {value}" for name, value in entries.items())]
    (info / "entry_points.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root


@pytest.fixture
def events() -> Iterator[list[tuple[str, Any]]]:
    component_probe.EVENTS.clear()
    yield component_probe.EVENTS
    component_probe.EVENTS.clear()


def test_the_entry_points_are_the_ones_pyproject_declares() -> None:
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    names = set(declared["project"]["entry-points"][GROUP])
    # an installed package's metadata older than pyproject.toml would start a different server
    assert {c.name for c in installed()} == names


def test_the_default_server_has_every_built_in_component(tmp_path: Path) -> None:
    assert [c.name for c in for_store(installed(), "duckdb")] == BUILT_IN
    # a lake runs its own retention (by a lease) and its maintenance, the rest the same
    lake = [c.name for c in for_store(installed(), "ducklake")]
    assert lake == ["settler", "lake_maintenance", "lake_retention", *BUILT_IN[2:]]
    srv = ServerThread(make_settings(tmp_path)).start()
    try:
        rt = srv.runtime
        assert [c.name for c in rt.components] == BUILT_IN
        kinds = [type(e) for e in rt.extensions]
        assert kinds == [Settler, RetentionService, EvaluationService, FactsKeeper, LiveGauges, GrpcReceiver]
        for kind in kinds:  # each found by its type, the one that runs
            assert rt.find(kind) is rt.extensions[kinds.index(kind)]
        paths = set(srv.app.openapi()["paths"])  # every component's routes are the app's
        for path in (
            "/api/v1/export", "/api/v1/coverage", "/api/v1/evaluate", "/api/v1/feedback", "/api/v1/triage",
            "/api/v1/labels", "/api/v1/compare", "/api/v1/traces/{trace_id}/view", "/api/v1/ui/overview",
            "/api/v1/ui/live",
        ):  # fmt: skip
            assert path in paths, path
    finally:
        srv.stop()


def test_a_third_party_component_installed_by_an_entry_point_runs_with_the_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, start_server: StartServer, events: list[tuple[str, Any]]
) -> None:
    monkeypatch.syspath_prepend(
        str(distribution(tmp_path / "site", {"probe": "tests.ragfault.component_probe:COMPONENT"}))
    )
    assert [c.name for c in installed()] == ["settler", "lake_maintenance", "lake_retention", *WITH_PROBE[1:]]
    cfg = tmp_path / "ragfault.toml"
    cfg.write_text('[probe]\ngreeting = "hola"\n', encoding="utf-8")
    srv = start_server(config_file=str(cfg))
    rt = srv.runtime
    assert [c.name for c in rt.components] == WITH_PROBE
    (built, ctx), (started, evaluation) = events
    # the typed context is the server's: the same store and writer the core runs
    assert built == "built" and ctx is rt and ctx.store is rt.store and ctx.writer is rt.writer
    # it started after the components before it in order, and found the running scheduler by type
    assert started == "start" and evaluation is rt.find(EvaluationService) is not None
    probe = rt.find(Probe)
    assert probe is not None and rt.extensions[-2:] == [probe, rt.find(GrpcReceiver)]
    assert probe.settings.greeting == "hola"  # its own table of the config file
    r = srv.http.get("/api/v1/probe")
    assert r.status_code == 200, r.text
    assert r.json() == {"greeting": "hola", "evaluation": True}
    srv.stop()
    # stopped with the server, before the core: the writer still ran its job
    assert events[2:] == [("stop", 42)]


def test_a_config_file_may_hold_an_installed_component_s_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, events: list[tuple[str, Any]]
) -> None:
    cfg = tmp_path / "ragfault.toml"
    cfg.write_text('[probe]\ngreeting = "hola"\n', encoding="utf-8")
    with pytest.raises(ConfigError, match=r"unknown table \[probe\]"):
        load_settings(cfg)  # no component declares it
    monkeypatch.syspath_prepend(
        str(distribution(tmp_path / "site", {"probe": "tests.ragfault.component_probe:COMPONENT"}))
    )
    tree = load_settings(cfg)  # as ``ragfault serve`` reads it
    # the test's ports and database, the rest of the tree as read
    srv = ServerThread(tree.model_copy(update={"server": make_settings(tmp_path, config_file=str(cfg))}))
    try:
        srv.start()
        probe = srv.runtime.find(Probe)
        assert probe is not None and probe.settings.greeting == "hola"  # not in the tree: read from the file
    finally:
        srv.stop()


def test_the_server_takes_its_components_as_a_list(tmp_path: Path, events: list[tuple[str, Any]]) -> None:
    order: list[str] = []

    class Recorder:
        def __init__(self, name: str) -> None:
            self.name = name

        def start(self) -> None:
            order.append(f"start {self.name}")

        def stop(self) -> None:
            order.append(f"stop {self.name}")

    def recorder(name: str) -> Component:
        return Component(name, service=lambda ctx: Recorder(name), order=ord(name[0]))

    components = [recorder("b"), component_probe.COMPONENT, recorder("a")]
    srv = ServerThread(make_settings(tmp_path), components).start()
    try:
        rt = srv.runtime
        assert [c.name for c in rt.components] == ["a", "b", "probe"]  # by order, then name
        assert rt.find(EvaluationService) is None  # only what was passed
        assert events[1] == ("start", None)
        url = f"http://127.0.0.1:{srv.http_port}"
        assert httpx.get(f"{url}/api/v1/probe", timeout=30).json() == {
            "greeting": "hello",
            "evaluation": False,
        }
        assert httpx.post(f"{url}/api/v1/evaluate", json={}, timeout=30).status_code == 404
    finally:
        srv.stop()
    assert order == ["start a", "start b", "stop b", "stop a"]
    assert events[-1] == ("stop", 42)


def test_a_component_runs_on_the_stores_it_names() -> None:
    only_lake = Component("lake_only", stores=frozenset({"ducklake"}))
    assert for_store([only_lake], "duckdb") == [] and for_store([only_lake], "ducklake") == [only_lake]
    with pytest.raises(ConfigError, match="unknown store"):
        Component("x", stores=frozenset({"sqlite"}))


@pytest.mark.parametrize(
    ("entries", "message"),
    [
        ({"probe": "tests.ragfault.component_probe:NOT_A_COMPONENT"}, "is not a Component"),
        ({"probe": "tests.ragfault.no_such_module:COMPONENT"}, "failed to load"),
        ({"probe": "tests.ragfault.component_probe:COMPONENT", "again": "tests.ragfault.component_probe:COMPONENT"},
         "duplicate component name 'probe'"),
    ],
)  # fmt: skip
def test_a_bad_component_entry_point_fails_at_startup_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, entries: dict[str, str], message: str
) -> None:
    monkeypatch.syspath_prepend(str(distribution(tmp_path, entries)))
    with pytest.raises(ConfigError, match=message):
        installed()
    with pytest.raises(ConfigError, match=message):
        ServerThread(make_settings(tmp_path))
    assert not (tmp_path / "ragfault.duckdb").exists()  # refused before the store was opened
