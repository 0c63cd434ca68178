"""``ragfault serve``: run the collector (OTLP/HTTP + API, OTLP/gRPC) until interrupted."""

from __future__ import annotations

import logging
import signal
import socket
import threading
from collections.abc import Sequence
from typing import Any

import uvicorn

from collector.api.app import create_app
from collector.components import Component
from collector.config import ServerSettings
from collector.receivers.connections import uvicorn_options
from collector.runtime import Runtime
from ragfault.settings import Settings, tree_for
from ragfault_core.errors import ConfigError, StoreUnavailable
from ragfault_core.gcpolicy import collect_rarely
from ragfault_core.mallocpolicy import keep_freed_memory

log = logging.getLogger("ragfault")


def build(
    settings: ServerSettings | Settings, components: Sequence[Component] | None = None
) -> tuple[Runtime, Any]:
    """The runtime and app with ``components`` wired in (default: every installed one,
    ``collector.components.installed``, the settler and the gRPC receiver among them), those of
    the configured store only. Given ``ServerSettings`` alone, the other tables come from its
    config file (``tree_for``); every component reads its table from the one tree the runtime
    holds."""
    tree = settings if isinstance(settings, Settings) else tree_for(settings)
    runtime = Runtime(tree.server, components=components, tree=tree)
    routers = [factory for c in runtime.components for factory in c.routers]
    return runtime, create_app(runtime, routers=routers)


class ServerThread:
    """The server in a background thread (for ``demo`` and tests); ``start()`` returns once healthy.
    ``components``: the server's parts beyond the core (default: every installed one); a list
    given is the whole server, so one without the ``grpc`` component receives over HTTP only."""

    def __init__(
        self, settings: ServerSettings | Settings, components: Sequence[Component] | None = None
    ) -> None:
        self.runtime, self.app = build(settings, components)
        self.settings = settings = self.runtime.settings
        config = uvicorn.Config(
            self.app,
            host=settings.host,
            port=settings.http_port,
            log_level="warning",
            lifespan="on",
            **uvicorn_options(settings),
        )
        self.server = uvicorn.Server(config)
        # DuckDB invalidated the database: stop serving (``serve`` then exits 1 for a restart)
        self.runtime.store.on_fatal.append(lambda _: setattr(self.server, "should_exit", True))
        self.thread = threading.Thread(target=self.server.run, name="ragfault-http", daemon=True)

    @property
    def http_port(self) -> int:
        for s in self.server.servers:
            for sock in s.sockets:
                return int(sock.getsockname()[1])
        return self.settings.http_port

    def start(self, timeout: float = 30) -> ServerThread:
        self.thread.start()
        deadline = threading.Event()
        waited = 0.0
        while not (self.server.started and self.runtime.ready):
            if not self.thread.is_alive():
                raise RuntimeError("server thread exited during startup")
            deadline.wait(0.05)
            waited += 0.05
            if waited > timeout:
                raise TimeoutError("server did not start")
        return self

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(30)


def check_ports(settings: ServerSettings) -> None:
    """Refuse to start when a port is taken, before anything is created (the database file included)."""
    host = settings.host.strip("[]")
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    for port, what in ((settings.http_port, "http_port"), (settings.grpc_port, "grpc_port")):
        if not port:
            continue
        with socket.socket(family, socket.SOCK_STREAM) as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the servers do
            try:
                s.bind((host, port))
            except OSError as exc:
                raise ConfigError(
                    f"cannot listen on {settings.host}:{port} ({what}): {exc.strerror}; "
                    "another server may be running there: pass --http-port / --grpc-port"
                ) from exc


class _Server(uvicorn.Server):
    """uvicorn's server, which logs where the web UI is once it listens (after uvicorn's own line)."""

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        if not self.started:
            return
        ports = [int(sock.getsockname()[1]) for s in self.servers for sock in s.sockets]
        host = self.config.host
        shown = "127.0.0.1" if host in ("0.0.0.0", "::", "") else host  # noqa: S104 (a bind-all address, shown)
        shown = f"[{shown}]" if ":" in shown else shown
        port = ports[0] if ports else self.config.port
        log.info("web UI at http://%s:%d/ui (the HTTP API's reference at /docs)", shown, port)


def check_database(settings: ServerSettings) -> None:
    """Refuse, before anything starts, a ``--db`` file that is not a ragfault database (a text
    file, another application's DuckDB file) or that another process holds."""
    if settings.store != "duckdb":
        return
    from ragfault.dbfile import SERVE_HELD, check_writable

    check_writable(settings.db, held=SERVE_HELD)


def serve(tree: ServerSettings | Settings) -> None:
    settings = tree.server if isinstance(tree, Settings) else tree
    check_ports(settings)
    check_database(settings)
    logging.basicConfig(
        level=settings.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    keep_freed_memory()  # before the store allocates: a checkpoint's buffers reuse freed pages
    runtime, app = build(tree)
    config = uvicorn.Config(
        app,
        host=settings.host,
        port=settings.http_port,
        log_level=settings.log_level,
        lifespan="on",
        timeout_graceful_shutdown=10,
        **uvicorn_options(settings),
    )
    server = _Server(config)
    signal.signal(signal.SIGTERM, lambda *_: setattr(server, "should_exit", True))
    # once DuckDB has invalidated the database (a write failed on a full disk) only a new process
    # can open it: stop, and exit 1 so the supervisor starts the server again
    runtime.store.on_fatal.append(lambda _: setattr(server, "should_exit", True))
    collect_rarely()  # what start-up built stays; requests' objects are collected far less often
    server.run()
    if runtime.store.fatal:
        raise StoreUnavailable(f"stopped: {runtime.store.fault}")
