"""Server components: what runs beside the collector's core, and the typed context each is given.

The core of a collector process (``collector.runtime.Runtime``) is the store, the writer, the
receivers' pipeline, the settler, the lake's maintenance and the gRPC receiver. Everything else the
server runs (retention, coverage, the evaluation scheduler, the judge API, experiments, the web UI,
the live gauges) is a ``Component``: a name, the config table it reads, the HTTP routers it adds and
a factory of the background part it starts and stops. The server is the list of them, found through
the ``ragfault.components`` entry-point group as evaluators are (``evaluators.registry``), so a
package installed beside ragfault adds one without touching the server.

A factory and a router are given a ``Context``: the core's parts as typed attributes, the
component's own table (``Context.table``) and typed handles to the other components' parts
(``Context.find``), never a runtime to read attributes off by name.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol, TypeVar

from collector.entrypoints import load_group
from collector.errors import ConfigError

if TYPE_CHECKING:
    from fastapi import APIRouter

    from collector.config import ServerSettings
    from collector.metrics import Metrics
    from collector.settle import Settler
    from collector.store import Store
    from collector.store.lake import LakeStore
    from collector.store.writer import Writer

GROUP = "ragfault.components"
STORES = frozenset({"duckdb", "ducklake"})

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
    def metrics(self) -> Metrics: ...

    @property
    def settler(self) -> Settler | None: ...

    @property
    def clock(self) -> Callable[[], float]: ...

    @property
    def grpc_port(self) -> int | None: ...

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
ServiceFactory = Callable[[Context], Service]


@dataclass(frozen=True)
class Component:
    """One part of the server. ``table``: the config table it reads (None: none); ``service``:
    the factory of its background part (None: routers only); ``routers``: its HTTP routers, built
    when the app is; ``stores``: the backends it runs on; ``order``: where it starts (lower first;
    services stop in the reverse order), the name breaking ties."""

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
    return in_order(found)


def in_order(components: Iterable[Component]) -> list[Component]:
    """Start order: ``order``, then name."""
    return sorted(components, key=lambda c: (c.order, c.name))


def for_store(components: Sequence[Component], store: str) -> list[Component]:
    """The components that run on this backend, in start order."""
    return [c for c in in_order(components) if store in c.stores]
