"""Request bodies of the API and the pages, each bounded by its route's limit before a handler sees it.

A handler that reads its body (``await request.body()``, a pydantic body parameter) holds all of it,
whatever its size: a 300 MB feedback comment was read whole, stored and answered 200. ``BodyLimit``
is an ASGI middleware in front of every route but OTLP ingest (``/v1/*``, which reads its bodies
itself under ``max_body_bytes`` and the in-flight budget): it reads the body incrementally and
refuses it with 413, naming the limit, as soon as it is known to be too large, before the route
runs:

- with a ``Content-Length`` over the limit, at once, before a byte of the body is read;
- without one (chunked) or when the body runs past the length it announced (the server's framing
  stops that), once the bytes received pass the limit: no more than the limit is ever held.

The 413 closes the connection (``Connection: close``), so a client still sending is not read to
the end. A body that sends nothing for ``body_timeout_seconds`` ends with 408. A body within its
limit is handed to the route as one message, exactly as it came. Its bytes are held in the ingest
budget (``max_inflight_bytes``, ``collector.receivers.inflight``) while it is read and handled: API uploads
and OTLP requests share one bound, and an upload that does not fit now is answered 503 with
``Retry-After``.

The limits (``[server] api_body_bytes``, ``ApiBodyLimits``) are per route: a knowledge-base or
gold-set load is a file and may be large, a feedback event is a few hundred bytes, and any route
not named below (including those other packages add) gets ``default``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import orjson
from pydantic import BaseModel, ConfigDict, Field
from starlette.requests import ClientDisconnect, Request

from collector.metrics import Metrics
from collector.receivers.inflight import ByteBudget
from ragfault_core.errors import PayloadTooLarge, RagfaultError, status_of

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

OTLP_PREFIX = "/v1/"  # the receivers' own limits apply there
API_PREFIX = "/api/v1/"
REFUSED = "ragfault_api_bodies_refused_total"


class ApiBodyLimits(BaseModel):
    """The largest request body, in bytes, of each route of the API (``[server.api_body_bytes]``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kb: int = Field(
        64 << 20, gt=0, description="POST /api/v1/kb: a knowledge-base load (JSONL), 64 MiB by default."
    )
    gold: int = Field(64 << 20, gt=0, description="POST /api/v1/gold: a gold-set load (JSONL), 64 MiB.")
    labels: int = Field(16 << 20, gt=0, description="POST /api/v1/labels: human labels, 16 MiB.")
    evaluate: int = Field(
        16 << 20, gt=0, description="POST /api/v1/evaluate: a list of trace ids to re-run, 16 MiB."
    )
    feedback: int = Field(64 << 10, gt=0, description="POST /api/v1/feedback: one feedback event, 64 KiB.")
    default: int = Field(
        1 << 20,
        gt=0,
        description="Every other route (SQL, export, judge, run marks, the pages, routes added later), 1 MiB.",
    )

    def of(self, path: str) -> tuple[str, int]:
        """The name of the limit that applies to ``path`` and its value: a route of ``/api/v1/``
        named by a field, else ``default``."""
        if path.startswith(API_PREFIX):
            name = path[len(API_PREFIX) :].rstrip("/")
            if name in ApiBodyLimits.model_fields and name != "default":
                return name, int(getattr(self, name))
        return "default", self.default


def size_text(n: int) -> str:
    """``67108864`` -> ``64 MiB``; a size as a reader of the message would write it."""
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift} {unit}"
    return f"{n} bytes"


class BodyLimit:
    """The middleware; see the module docstring. ``idle_timeout`` is ``body_timeout_seconds``."""

    def __init__(
        self,
        app: ASGIApp,
        limits: ApiBodyLimits,
        idle_timeout: float,
        metrics: Metrics | None = None,
        budget: ByteBudget | None = None,
    ) -> None:
        self.app = app
        self.limits = limits
        self.idle_timeout = idle_timeout
        self.metrics = metrics
        # the ingest budget (``collector.receivers.inflight``): an API body holds its bytes in it while it is
        # read and handled, so API uploads and OTLP requests at once stay under one bound
        self.budget = budget
        if metrics is not None:
            metrics.describe(
                REFUSED, "counter", "API request bodies refused (413 over the limit, 408 stalled)."
            )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path") or "/"
        if scope["type"] != "http" or path.startswith(OTLP_PREFIX):
            await self.app(scope, receive, send)
            return
        # otlp_http imports collector.config, which imports this module for ApiBodyLimits
        from collector.receivers.otlp_http import read_body

        name, limit = self.limits.of(path)
        held = [0]
        try:
            await self._read_and_handle(scope, receive, send, name, limit, held, read_body)
        finally:
            if self.budget is not None and held[0]:
                self.budget.give(held[0])

    async def _read_and_handle(
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        name: str,
        limit: int,
        held: list[int],
        read_body: Any,
    ) -> None:
        path = scope.get("path") or "/"
        try:
            buf = await read_body(
                Request(scope, receive), limit, budget=self.budget, held=held, idle_timeout=self.idle_timeout
            )
        except ClientDisconnect:
            return  # nobody is left to answer
        except PayloadTooLarge:
            method = scope.get("method", "POST")
            setting = f"[server.api_body_bytes] {name}"
            exc = PayloadTooLarge(
                f"the body of {method} {path} is larger than its limit of {size_text(limit)} "
                f"({limit} bytes, {setting})"
            )
            await self.refuse(exc, name, send)
            return
        except RagfaultError as exc:  # a stalled body (408), or the budget spent (503)
            await self.refuse(exc, name, send)
            return
        box = [bytes(buf)]  # an ASGI body is bytes; the route gets the only reference
        del buf

        async def replay() -> Message:
            if box:
                return {"type": "http.request", "body": box.pop(), "more_body": False}
            return await receive()  # after the body: http.disconnect, as the server tells it

        await self.app(scope, replay, send)

    async def refuse(self, exc: RagfaultError, name: str, send: Send) -> None:
        """Answer ``exc`` as the API answers its errors, and close the connection: the rest of the
        body is never read."""
        st = status_of(exc)
        if self.metrics is not None:
            self.metrics.inc(REFUSED, route=name, status=str(st.http))
        body = orjson.dumps({"error": st.error, "detail": st.message})
        headers = [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
            (b"connection", b"close"),
            *((k.lower().encode(), v.encode()) for k, v in st.headers.items()),
        ]
        await send({"type": "http.response.start", "status": st.http, "headers": headers})
        await send({"type": "http.response.body", "body": body})
