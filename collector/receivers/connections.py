"""HTTP connections that stall or pile up are closed, so the server keeps serving.

uvicorn closes an idle keep-alive connection after ``timeout_keep_alive``, but a connection that
never finishes its request head stays open for ever, and every open connection holds a file
descriptor: enough of them (the descriptor limit) and the server can accept nothing more, neither
ingest nor ``/healthz``. ``guarded_protocol`` is uvicorn's h11 protocol with two more rules:

- a connection whose request head is not complete ``header_timeout_seconds`` after it opened (or
  after its last response) is closed;
- asyncio accepts at most ``BACKLOG`` connections in one go;
- past ``max_connections`` open connections, a new one closes the oldest connection that is
  waiting for a request (no request of it is being served); when every connection is serving a
  request, the new one is closed instead.

A stalled request *body* is the receiver's to time out (``body_timeout_seconds``).
"""

from __future__ import annotations

import asyncio
import logging
import resource
import time
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from collector.config import ServerSettings

log = logging.getLogger("ragfault.connections")

MAX_INCOMPLETE_EVENT_BYTES = 64 << 10  # the largest request head (uvicorn's h11_max_incomplete_event_size)
# The listen backlog, which is also how many connections asyncio accepts in one go before the
# connections closed meanwhile give their descriptors back (uvicorn's default, 2048, accepted every
# waiting connection at once and ran out of descriptors before any was closed).
BACKLOG = 128


def default_max_connections() -> int:
    """A quarter of this process's file-descriptor limit (the rest is DuckDB's, gRPC's and the
    decode workers'), at least 16 and at most 4096."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return 4096
    return max(16, min(4096, soft // 4))


def guarded_protocol(settings: ServerSettings) -> type[asyncio.Protocol]:
    """The h11 protocol class for uvicorn's ``http`` setting, with ``settings``' bounds."""
    limit = settings.max_connections or default_max_connections()
    head_timeout = settings.header_timeout_seconds

    class GuardedH11Protocol(H11Protocol):
        limit_connections = limit

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self.opened_at = time.monotonic()
            self._head_timer: asyncio.TimerHandle | None = None
            self._arm_head_timer()
            if len(self.connections) > limit:
                self._make_room()

        def _waiting_for_request(self) -> bool:
            return self.conn.their_state is h11.IDLE and (self.cycle is None or self.cycle.response_complete)

        def _make_room(self) -> None:
            # connections closed a moment ago stay in the set until asyncio calls connection_lost
            live = [c for c in self.connections if not c.transport.is_closing()]
            if len(live) <= limit:
                return
            idle = [c for c in live if c is not self and _waiting(c)]
            victim: Any = min(idle, key=lambda c: getattr(c, "opened_at", 0.0)) if idle else self
            victim.transport.close()

        def _arm_head_timer(self) -> None:
            if self._head_timer is not None:
                self._head_timer.cancel()
            self._head_timer = self.loop.call_later(head_timeout, self._head_stalled)

        def _head_stalled(self) -> None:
            self._head_timer = None
            if not self.transport.is_closing() and self._waiting_for_request():
                self.transport.close()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing():
                self._arm_head_timer()

        def connection_lost(self, exc: Exception | None) -> None:
            if self._head_timer is not None:
                self._head_timer.cancel()
                self._head_timer = None
            super().connection_lost(exc)

    def _waiting(c: Any) -> bool:
        return bool(getattr(c, "_waiting_for_request", lambda: False)())

    return GuardedH11Protocol


def uvicorn_options(settings: ServerSettings) -> dict[str, Any]:
    """The uvicorn.Config arguments that bound connections."""
    return {
        "http": guarded_protocol(settings),
        "timeout_keep_alive": settings.keep_alive_seconds,
        "h11_max_incomplete_event_size": MAX_INCOMPLETE_EVENT_BYTES,
        "backlog": BACKLOG,
    }
