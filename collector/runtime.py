"""Wiring of one collector process: store, writer, pipeline, settler, gRPC server.

``Runtime`` is built from ``ServerSettings`` in ``main()`` (or a test) and passed to the HTTP app;
nothing is created at import time.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from collector.components import Component, Service
from collector.config import ServerSettings, settings_table
from collector.decode_pool import default_duckdb_threads, default_workers
from collector.metrics import Metrics
from collector.normalize.mapping import compile_mappings, load_convention_settings
from collector.pipeline import Pipeline
from collector.settle import Settler
from collector.store import Store
from collector.store.content import ContentSources
from collector.store.lake import LakeStore
from collector.store.writer import Writer

log = logging.getLogger("ragfault")

# Ingest is under pressure (the settle loop, and the evaluation it triggers, yield to it) while span
# batches waited for the writer during at least INGEST_PRESSURE_SHARE of the last
# INGEST_PRESSURE_WINDOW seconds: it goes as fast as it can. A steady stream it keeps up with has a
# request in flight much of the time, which is no pressure. (Pressure used to be any span waiting at
# the instant the loop looked: at 200-300 traces a second that stalled settling for seconds at a
# time, up to the backoff's 30 s.)
INGEST_PRESSURE_WINDOW = 2.0
INGEST_PRESSURE_SHARE = 0.75

_T = TypeVar("_T")


class Runtime:
    """The core of a collector process and the ``collector.components.Context`` its components
    are given. ``components`` join after the core is up (the evaluation scheduler, for one): the
    service each one's factory makes is started in order, and stopped in the reverse order before
    the core stops."""

    def __init__(
        self,
        settings: ServerSettings,
        components: Sequence[Component] = (),
        tree: Any = None,
    ) -> None:
        self.components = list(components)
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
        # on a lake every collector settles: each trace by the one that claimed it (store.lake_work)
        self.settler: Settler | None = Settler(
            self.store.cursor(),
            lambda fn: self.writer.call(fn, timeout=120),
            pressure=lambda: self.writer.waiting_share(INGEST_PRESSURE_WINDOW) >= INGEST_PRESSURE_SHARE,
            settle_seconds=settings.settle_seconds,
            max_wait_seconds=settings.max_trace_wait_seconds,
            metrics=self.metrics,
            max_resettles=settings.max_resettles_per_minute,
            content_sources=self.content_sources,
            options=self.pipeline.options,  # read again at settle as at ingest
        )
        if self.settler is not None:
            self.settler.listen(self.writer.listeners)
        # the lake's maintenance: every collector asks, the holder of the catalog lease runs it
        self.maintainer: Any = None
        if isinstance(self.store, LakeStore) and settings.lake_maintenance_seconds > 0:
            from collector.store.lease import CatalogLeases
            from collector.store.maintenance import Maintainer

            assert settings.catalog
            self.maintainer = Maintainer(
                self.store,
                CatalogLeases(
                    settings.catalog,
                    extension_repository=settings.extension_repository,
                    extension_dir=settings.extension_dir,
                ),
                interval_seconds=settings.lake_maintenance_seconds,
                keep_snapshots_seconds=settings.lake_keep_snapshots_seconds,
            )
        self.grpc_server: Any = None
        self.grpc_port: int | None = None
        self.extensions: list[Service] = []  # the components' services, in start order
        self._parts: list[object] = []  # what ``find`` finds: started services, provided parts
        self.closers: list[Callable[[], None]] = []  # run by stop(), last added first
        self.ready = False

    def start(self, grpc: bool = True) -> None:
        self.writer.start()
        self.pipeline.start_pool()  # in the background: the first request need not wait for the workers
        if self.settler is not None:
            self.settler.start()
        if self.maintainer is not None:
            self.maintainer.start()
        for component in self.components:
            if component.service is None:
                continue
            ext = component.service(self)
            self.provide(ext)
            ext.start()
            self.extensions.append(ext)
        if grpc:
            from collector.receivers.otlp_grpc import start_grpc

            self.grpc_server, self.grpc_port = start_grpc(self.settings, self.pipeline, self.metrics)
        self.ready = True
        log.info("collector ready: db=%s grpc=%s", self.store.path, self.grpc_port)

    def stop(self) -> None:
        self.ready = False
        if self.grpc_server is not None:
            self.grpc_server.stop(grace=5).wait(10)
        for ext in reversed(self.extensions):
            ext.stop()
        if self.settler is not None:
            self.settler.stop()
        if self.maintainer is not None:
            self.maintainer.stop()
        self.writer.stop()
        for close in reversed(self.closers):
            close()
        self.store.close()

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
