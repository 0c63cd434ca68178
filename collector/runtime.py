"""Wiring of one collector process: its core (store, writer, pipeline) and its components.

``Runtime`` is built from ``ServerSettings`` in ``main()`` (or a test) and passed to the HTTP app;
nothing is created at import time. Everything beyond the core, the settler and the gRPC receiver
included, is a component (``collector.components``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from collector.components import Component, Service, for_store, installed
from collector.config import ServerSettings
from collector.ingest.decode_pool import default_duckdb_threads
from collector.ingest.pipeline import Pipeline
from collector.metrics import Metrics
from collector.normalize.mapping import compile_mappings, load_convention_settings
from collector.receivers.otlp_grpc import COMPONENT as GRPC
from collector.receivers.otlp_grpc import GrpcReceiver
from collector.settling.settle import Settler
from collector.store import Store
from collector.store.content import ContentSources
from collector.store.lake.store import LakeStore
from collector.store.writer import Writer
from ragfault_core.processes import default_workers
from ragfault_core.settings import settings_table

log = logging.getLogger("ragfault")

_T = TypeVar("_T")


class Runtime:
    """The core of a collector process and the ``collector.components.Context`` its components
    are given. ``components`` join after the core is up: the service each one's factory makes is
    started in order, and stopped in the reverse order before the core stops. By default they are
    every installed component (``collector.components.installed``), the settler and the gRPC
    receiver among them, so a runtime built without a list settles and receives as ``ragfault
    serve`` does; a list given is the whole server (those of the configured store), and one
    without the settler stores spans without assembling them (logged at start)."""

    def __init__(
        self,
        settings: ServerSettings,
        components: Sequence[Component] | None = None,
        tree: Any = None,
    ) -> None:
        self.components = for_store(installed() if components is None else components, settings.store)
        self.settings = settings
        # the whole settings tree (``ragfault.settings.Settings``, its ``server`` is ``settings``):
        # components read their tables from it (``table``)
        self.tree = tree
        if tree is not None and tree.server is not settings:
            raise ValueError("the settings tree's [server] must be the runtime's settings")
        self.clock: Callable[[], float] = time.monotonic  # time limits of API calls (tests step it)
        self.metrics = Metrics()
        workers = settings.decode_workers if settings.decode_workers is not None else default_workers()
        threads = settings.duckdb_threads or default_duckdb_threads(workers)
        self.store: Store | LakeStore
        if settings.store == "ducklake":
            assert settings.catalog and settings.data_path  # checked by ServerSettings
            self.store = LakeStore(
                settings.catalog,
                settings.data_path,
                memory_limit=settings.memory_limit,
                threads=threads,
                extension_repository=settings.extension_repository,
                extension_dir=settings.extension_dir,
                claim_seconds=settings.lake_claim_seconds,
                claim_max_traces=settings.lake_claim_max_traces,
            )
        else:
            self.store = Store(settings.db, memory_limit=settings.memory_limit, threads=threads)
        # whose GenAI content events fill a span: its own service's, and trusted ones; the records
        # refused, at ingest (Store.write_signals) and at a trace's first settle, are counted
        self.content_sources = ContentSources(
            frozenset(settings.trusted_content_sources),
            lambda n: self.metrics.inc("ragfault_content_events_refused_total", n),
        )
        self.store.content_sources = self.content_sources
        self.writer = Writer(
            self.store,
            self.metrics,
            max_queue_spans=settings.max_queue_spans,
            max_batch_spans=settings.max_batch_spans,
            busy_checkpoint_bytes=settings.checkpoint_wal_bytes,
            idle_checkpoint_bytes=settings.idle_checkpoint_wal_bytes,
            lanes=settings.writer_threads,
        )
        self.pipeline = Pipeline(
            self.writer,
            self.metrics,
            settings.source_keys,
            decode_workers=workers,
            mappings=compile_mappings(self.table("conventions", load_convention_settings)),
            max_inflight_bytes=settings.max_inflight_bytes,
            max_decoded_bytes=settings.max_decoded_bytes or settings.max_inflight_bytes,
            future_grace_seconds=settings.future_grace_seconds,
        )
        self.extensions: list[Service] = []  # the components' services, in start order
        self._parts: list[object] = []  # what ``find`` finds: started services, provided parts
        self.closers: list[Callable[[], None]] = []  # run by stop(), last added first
        self.ready = False

    def start(self, grpc: bool = True) -> None:
        """Start the core, then each component's service in order (``grpc=False``: all but the
        gRPC receiver's)."""
        self.writer.start()
        self.pipeline.start_pool()  # in the background: the first request need not wait for the workers
        for component in self.components:
            if component.service is None or (not grpc and component.name == GRPC.name):
                continue
            service = component.service(self)
            if service is None:  # nothing to run with these settings
                continue
            self.provide(service)
            service.start()
            self.extensions.append(service)
        if self.settler is None:
            log.warning("no settler component: spans are stored, traces are not assembled or evaluated")
        self.ready = True
        log.info("collector ready: db=%s grpc=%s", self.store.path, self.grpc_port)

    def stop(self) -> None:
        """Stop the components' services in the reverse order (the gRPC receiver first), then
        the core."""
        self.ready = False
        for service in reversed(self.extensions):
            service.stop()
        self.writer.stop()
        for close in reversed(self.closers):
            close()
        self.store.close()

    @property
    def settler(self) -> Settler | None:
        """The settler component's ``Settler`` once started (what settles, and what the
        evaluation scheduler listens to); None in a server without it."""
        return self.find(Settler)

    @property
    def grpc_port(self) -> int | None:
        """The port the gRPC receiver bound once started; None in a server without it."""
        receiver = self.find(GrpcReceiver)
        return receiver.port if receiver is not None else None

    def table(self, name: str, load: Callable[[str | None], _T]) -> _T:
        """A component's ``[name]`` table (``collector.config.settings_table``)."""
        return settings_table(self.tree, self.settings.config_file, name, load)

    def find(self, kind: type[_T]) -> _T | None:
        """The first part provided that is a ``kind``: another component's service (the evaluation
        scheduler, retention) or a part it shares (the dashboard's facts), None before it exists."""
        for part in self._parts:
            if isinstance(part, kind):
                return part
        return None

    def provide(self, part: object) -> None:
        """Make ``part`` found by ``find``; a component's service is provided before it starts."""
        self._parts.append(part)
