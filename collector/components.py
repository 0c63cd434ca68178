"""Server components: the parts a collector process runs, and the typed context each is given.

A server is its core and a list of components. The core (``collector.runtime.Runtime``) is the
store, the writer and the receivers' pipeline: every component needs them (a component reads or
writes the store, and only the writer commits, one connection for the process; the HTTP receiver,
part of the app, and the gRPC one both decode through the pipeline), so each context holds them,
built before any component and stopped after all of them. Everything else is a ``Component``: a
name, the config table it reads, the HTTP routers it adds and a factory of the background part
it starts and stops. The built-in ones are the settler (``collector.settling.settle_service``), the lake's
maintenance, retention, coverage, the evaluation scheduler, the judge API, experiments, the web
UI, the live gauges and the OTLP/gRPC receiver. The server's list is the ``ragfault.components``
entry-point group, found as evaluators are (``evaluators.service.registry``), so a package installed
beside ragfault adds one without touching the server.

``order`` says where a component starts: the settler (1) and the lake's maintenance (2) right
after the core, the built-in services and APIs from 10 to 99, the gRPC receiver last (1000): the
server receives only once everything behind it runs, and stops receiving first (services stop
in the reverse order). A third party's component usually takes an order between 100 and 999.

A factory and a router are given a ``Context``: the core's parts as typed attributes, the
component's own table (``Context.table``) and typed handles to the other components' parts
(``Context.find``), never a runtime to read attributes off by name.
"""

from __future__ import annotations

import tomllib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypeVar

from ragfault_core.entrypoints import load_group
from ragfault_core.errors import ConfigError

if TYPE_CHECKING:
    from fastapi import APIRouter

    from collector.config import ServerSettings
    from collector.ingest.pipeline import Pipeline
    from collector.metrics import Metrics
    from collector.settling.settle import Settler
    from collector.store import Store
    from collector.store.lake.store import LakeStore
    from collector.store.writer import Writer

GROUP = "ragfault.components"
STORES = frozenset({"duckdb", "ducklake"})
# the project's own declaration of its components, when it runs from a source checkout
SOURCE_PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"

_T = TypeVar("_T")


class Service(Protocol):
    """The background part of a component: started once the core is up, stopped before it stops."""

    def start(self) -> None: ...

    def stop(self) -> None: ...


class Context(Protocol):
    """What a component's factory and routers are given (the server's ``Runtime`` is one)."""

    @property
    def settings(self) -> ServerSettings: ...

    @property
    def store(self) -> Store | LakeStore: ...

    @property
    def writer(self) -> Writer: ...

    @property
    def pipeline(self) -> Pipeline: ...

    @property
    def metrics(self) -> Metrics: ...

    @property
    def settler(self) -> Settler | None:
        """The settler component's ``Settler`` once it started (``find(Settler)``); None in a
        server without it."""
        ...

    @property
    def clock(self) -> Callable[[], float]: ...

    @property
    def grpc_port(self) -> int | None:
        """The port the gRPC receiver bound once it started; None without one."""
        ...

    def table(self, name: str, load: Callable[[str | None], _T]) -> _T:
        """The ``[name]`` table of the settings tree the server started with (or, when the tree
        has none of that name, ``load`` of the config file: a third party's own table)."""
        ...

    def find(self, kind: type[_T]) -> _T | None:
        """The part of another component that is a ``kind`` (its service, or what it provided)."""
        ...

    def provide(self, part: object) -> None:
        """Make ``part`` found by ``find`` (a component's services are provided when they start)."""
        ...


RouterFactory = Callable[[Context], "APIRouter"]
# None: nothing to run with these settings (the lake's maintenance with an interval of 0)
ServiceFactory = Callable[[Context], Service | None]


@dataclass(frozen=True)
class Component:
    """One part of the server. ``table``: the config table it reads (None: none, or only
    ``[server]``, through ``Context.settings``); ``service``: the factory of its background part
    (None: routers only); ``routers``: its HTTP routers, built when the app is; ``stores``: the
    backends it runs on; ``order``: where it starts (lower first; services stop in the reverse
    order), the name breaking ties."""

    name: str
    table: str | None = None
    service: ServiceFactory | None = None
    routers: tuple[RouterFactory, ...] = ()
    stores: frozenset[str] = field(default=STORES)
    order: int = 100

    def __post_init__(self) -> None:
        unknown = self.stores - STORES
        if unknown:
            raise ConfigError(f"component {self.name!r}: unknown store(s) {sorted(unknown)}")


def installed() -> list[Component]:
    """Every component of the ``ragfault.components`` entry-point group (the built-ins and any
    installed package's), in start order. A duplicate name, or an entry that is not a
    ``Component``, fails at startup with the entry point named."""
    found: list[Component] = []
    origins: dict[str, str] = {}
    for origin, comp in load_group(GROUP, Component, "component"):
        if comp.name in origins:
            raise ConfigError(f"duplicate component name {comp.name!r}: {origins[comp.name]} and {origin}")
        origins[comp.name] = origin
        found.append(comp)
    if not found:  # ragfault itself declares the built-in ones: its installed metadata is stale
        raise ConfigError(
            f"no {GROUP} entry points are installed: install ragfault again (pip install -e .) "
            "for its metadata to list its components"
        )
    missing = undeclared_built_ins(origins.values())
    if missing:  # a server without its settler or its gRPC receiver would run, and not say why
        raise ConfigError(
            f"ragfault's installed metadata lacks the component(s) {missing} its pyproject.toml "
            "declares: install ragfault again (pip install -e .)"
        )
    return in_order(found)


def undeclared_built_ins(loaded: Iterable[str]) -> list[str]:
    """In a source checkout (``SOURCE_PYPROJECT`` beside the packages), the names of the
    components its ``pyproject.toml`` declares whose entry point (``module:attribute``) is not
    among ``loaded``: an editable install made before they were added lists an older server. An
    installed wheel has no such file: its metadata is the declaration."""
    try:
        text = SOURCE_PYPROJECT.read_text(encoding="utf-8")
    except OSError:
        return []
    declared = tomllib.loads(text).get("project", {}).get("entry-points", {}).get(GROUP, {})
    have = set(loaded)
    return sorted(name for name, value in declared.items() if value not in have)


def in_order(components: Iterable[Component]) -> list[Component]:
    """Start order: ``order``, then name."""
    return sorted(components, key=lambda c: (c.order, c.name))


def for_store(components: Sequence[Component], store: str) -> list[Component]:
    """The components that run on this backend, in start order."""
    return [c for c in in_order(components) if store in c.stores]
