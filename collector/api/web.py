"""The web surface's guard: one ASGI middleware in front of every HTTP route.

A browser on the same machine as the server is an attack surface: any page it opens can send a
form post or a ``no-cors`` fetch to ``127.0.0.1:4318`` (no preflight for ``text/plain`` bodies),
and a DNS-rebinding page can even read the answers. Every route gets, without declaring anything:

- **Host**: on the API and the pages (not OTLP ingest, ``/healthz`` or ``/metrics``, which
  exporters, probes and scrapers reach by whatever address they were given), the Host header's name
  must be one of ``trusted_hosts`` (default: localhost, 127.0.0.1, ::1 and the bound address).
  A rebinding page sends its own name, so it is refused (400).
- **Origin**: a state-changing request (any method but GET, HEAD, OPTIONS) that a browser marks
  as coming from another origin (``Origin`` not this server, ``Origin: null``, or
  ``Sec-Fetch-Site`` other than ``same-origin`` / ``none``) is refused (403). Clients that are not
  browsers send neither header.
- **Fetch metadata on reads**: a GET, HEAD or OPTIONS of the API or ``/metrics`` that a browser
  marks ``Sec-Fetch-Site: cross-site`` or ``same-site`` is refused (403) too: its answer would be
  unreadable to the page, but the work is done (a ``compare`` costs a third of a second), so any
  page could keep the server busy. ``same-site`` is refused as well because every port of
  ``localhost`` is the same site: another local web app is not this server. On the pages only a
  top-level navigation (``Sec-Fetch-Mode: navigate`` to a document) may come from elsewhere, so
  a link to a trace still opens. ``same-origin`` (the UI's own calls), ``none`` (an address typed
  or bookmarked) and requests without the header (curl, SDKs) pass; a read of the API carrying
  another ``Origin`` (a cross-origin ``fetch`` from a browser that sends no fetch metadata) does not.
- **Content-Type**: a state-changing request must say JSON (``application/json``, ``+json``, or
  JSONL: ``application/x-ndjson``, ``application/jsonl``); under ``/v1/`` (OTLP) protobuf too.
  Anything else is 415: a cross-site form can only send ``text/plain``, ``multipart/form-data`` or
  ``application/x-www-form-urlencoded``. A request without a Content-Type is taken as JSON only
  when it comes from no browser (no ``Origin``, no ``Sec-Fetch-Site``: curl, SDKs, scripts).
- **Token**: ``/v1/*`` needs ``ingest_token``; ``/api/*`` needs ``api_token``; with
  ``protect_ui`` the pages (``/``, ``/ui``, ``/docs``, ``/openapi.json``) need it too, with
  ``protect_metrics`` ``/metrics`` (see ``ragfault_core.auth``).
- **Headers** on every answer: ``X-Content-Type-Options: nosniff``, ``Referrer-Policy:
  no-referrer``, ``X-Frame-Options: DENY`` and a Content-Security-Policy (``default-src 'none';
  frame-ancestors 'none'``) unless the route set its own (``html_page`` does, with the hashes of
  the page's inline scripts).

A refusal is answered through ``ragfault_core.errors.status_of`` like every other error: JSON
``{"error", "detail"}``, or under ``/v1/`` an OTLP ``Status`` in the request's encoding.
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import urlsplit

from fastapi.responses import HTMLResponse

from collector.config import ServerSettings
from collector.metrics import Metrics
from ragfault_core.auth import check_token
from ragfault_core.errors import (
    CrossOrigin,
    RagfaultError,
    UnsupportedMediaType,
    UntrustedHost,
    status_of,
)

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
JSON_TYPES = frozenset(
    {
        "application/json",
        "application/x-ndjson",
        "application/jsonl",
        "application/x-jsonlines",
        "application/jsonlines",
    }
)
PROTOBUF_TYPES = frozenset(
    {"application/x-protobuf", "application/protobuf", "application/vnd.google.protobuf"}
)
WILDCARD_HOSTS = frozenset({"0.0.0.0", "::", ""})
LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "::1")

SECURITY_HEADERS = (
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"cross-origin-resource-policy", b"same-origin"),
)
DEFAULT_CSP = b"default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"


def trusted_hosts(settings: ServerSettings) -> tuple[str, ...]:
    """The Host names accepted on the API and the pages (``*`` accepts any)."""
    if settings.trusted_hosts is not None:
        return tuple(h.lower() for h in settings.trusted_hosts)
    bound = settings.host.strip("[]").lower()
    return LOOPBACK_HOSTS + (() if bound in WILDCARD_HOSTS or bound in LOOPBACK_HOSTS else (bound,))


def host_name(host: str) -> str:
    """``example.com:4318`` -> ``example.com``; ``[::1]:4318`` -> ``::1``."""
    host = host.strip().lower()
    if host.startswith("["):
        return host[1 : host.find("]")] if "]" in host else host
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def host_trusted(name: str, trusted: tuple[str, ...]) -> bool:
    return any(t in ("*", name) or (t.startswith("*.") and name.endswith(t[1:])) for t in trusted)


def surface(path: str) -> str:
    """Which part of the server a path belongs to: otlp, api, metrics, health or page."""
    if path.startswith("/v1/"):
        return "otlp"
    if path.startswith("/api/"):
        return "api"
    if path == "/metrics":
        return "metrics"
    if path == "/healthz":
        return "health"
    return "page"


def media_base(content_type: str | None) -> str:
    return (content_type or "").split(";", 1)[0].strip().lower()


def is_json(content_type: str | None) -> bool:
    base = media_base(content_type)
    return base in JSON_TYPES or (base.startswith("application/") and base.endswith("+json"))


class WebGuard:
    """The middleware; see the module docstring. ``metrics`` counts refused OTLP requests the way
    the receivers count theirs (``ragfault_requests_total``)."""

    def __init__(self, app: ASGIApp, settings: ServerSettings, metrics: Metrics | None = None) -> None:
        self.app = app
        self.settings = settings
        self.metrics = metrics
        self.trusted = trusted_hosts(settings)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers: dict[str, list[str]] = {}
        for k, v in scope.get("headers") or ():
            headers.setdefault(k.decode("latin-1").lower(), []).append(v.decode("latin-1"))
        part = surface(scope.get("path") or "/")
        try:
            self.check(scope.get("method", "GET").upper(), part, headers)
        except RagfaultError as exc:
            await self.refuse(exc, part, headers, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                present = {k.lower() for k, _ in message.get("headers") or ()}
                extra = [(k, v) for k, v in SECURITY_HEADERS if k not in present]
                if b"content-security-policy" not in present:
                    extra.append((b"content-security-policy", DEFAULT_CSP))
                message["headers"] = [*(message.get("headers") or ()), *extra]
            await send(message)

        await self.app(scope, receive, send_with_headers)

    def check(self, method: str, part: str, headers: dict[str, list[str]]) -> None:
        s = self.settings
        if part in ("api", "page"):
            host = (headers.get("host") or [""])[0]
            if not host_trusted(host_name(host), self.trusted):
                raise UntrustedHost(
                    f"Host {host!r} is not one of trusted_hosts ({', '.join(self.trusted)}); "
                    "set trusted_hosts to the names clients use"
                )
        if method in SAFE_METHODS:
            self.check_read(part, headers)
        else:
            self.check_origin(headers)
            ctype = next(iter(headers.get("content-type") or ()), None)
            # no Content-Type at all: accepted from clients that are not browsers (curl, httpx,
            # SDKs); every browser sends Origin or Sec-Fetch-Site on a state change
            from_browser = "origin" in headers or "sec-fetch-site" in headers
            if ctype is None and not from_browser:
                pass
            elif not (is_json(ctype) or (part == "otlp" and media_base(ctype) in PROTOBUF_TYPES)):
                allowed = (
                    "application/json or application/x-protobuf"
                    if part == "otlp"
                    else ("application/json (or JSONL: application/x-ndjson)")
                )
                raise UnsupportedMediaType(f"unsupported Content-Type {ctype!r}; use {allowed}")
        token = {
            "otlp": s.ingest_token,
            "api": s.api_token,
            "page": s.api_token if s.protect_ui else None,
            "metrics": s.api_token if s.protect_metrics else None,
        }.get(part)
        check_token(headers.get("authorization", []), token)

    def check_read(self, part: str, headers: dict[str, list[str]]) -> None:
        """Refuse a read a browser sent from another site (see the module docstring)."""
        if part in ("otlp", "health"):
            return
        fetch_site = (headers.get("sec-fetch-site") or [""])[0].strip().lower()
        if fetch_site and fetch_site not in ("same-origin", "none"):
            if part == "page":
                mode = (headers.get("sec-fetch-mode") or [""])[0].strip().lower()
                dest = (headers.get("sec-fetch-dest") or [""])[0].strip().lower()
                if mode == "navigate" and dest in ("document", ""):
                    return
            raise CrossOrigin(f"a {fetch_site} request may not read this server's {part}")
        if part != "page" and "origin" in headers:  # a CORS read from a browser without fetch metadata
            self.check_origin(headers, f"read this server's {part}")

    def check_origin(
        self, headers: dict[str, list[str]], action: str = "change state on this server"
    ) -> None:
        fetch_site = (headers.get("sec-fetch-site") or [""])[0].lower()
        if fetch_site and fetch_site not in ("same-origin", "none"):
            raise CrossOrigin(f"a {fetch_site} request may not {action}")
        origin = next(iter(headers.get("origin") or ()), None)
        if origin is None:
            return
        host = (headers.get("host") or [""])[0].strip().lower()
        netloc = urlsplit(origin.strip().lower()).netloc if origin.strip().lower() != "null" else ""
        if not netloc or netloc != host:
            raise CrossOrigin(f"Origin {origin!r} may not {action}")

    async def refuse(self, exc: RagfaultError, part: str, headers: dict[str, list[str]], send: Send) -> None:
        st = status_of(exc)
        if part == "otlp":
            from collector.receivers.payload import JSON, PROTOBUF, encode_status

            kind = JSON if "json" in ((headers.get("content-type") or [""])[0]).lower() else PROTOBUF
            body = encode_status(st.grpc, st.message, kind)
            media = "application/json" if kind == JSON else "application/x-protobuf"
            if self.metrics is not None:
                outcome = "unauthorized" if st.http == 401 else str(st.http)
                self.metrics.inc("ragfault_requests_total", transport="http", outcome=outcome)
        else:
            import json

            body = json.dumps({"error": st.error, "detail": st.message}).encode()
            media = "application/json"
        out = [(b"content-type", media.encode()), (b"content-length", str(len(body)).encode())]
        out += [(k.lower().encode(), v.encode()) for k, v in st.headers.items()]
        out += [*SECURITY_HEADERS, (b"content-security-policy", DEFAULT_CSP)]
        await send({"type": "http.response.start", "status": st.http, "headers": out})
        await send({"type": "http.response.body", "body": body})


# --- HTML pages ------------------------------------------------------------------------------------

_INLINE_SCRIPT = re.compile(r"<script(?![^>]*\bsrc=)[^>]*>(.*?)</script>", re.S | re.I)


def page_csp(html: str) -> str:
    """The Content-Security-Policy of a page served by ragfault: scripts only from this server or
    inline blocks of the page itself (by hash, so an injected script does not run), inline styles,
    fetches to this server only, no framing."""
    hashes = " ".join(
        "'sha256-" + base64.b64encode(hashlib.sha256(m.group(1).encode()).digest()).decode() + "'"
        for m in _INLINE_SCRIPT.finditer(html)
    )
    return (
        f"default-src 'none'; script-src 'self' {hashes}; style-src 'self' 'unsafe-inline'; "
        "img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
    )


def html_page(html: str) -> Callable[[], HTMLResponse]:
    """A response factory for a static page, its CSP computed once: ``page = html_page(text)``, then
    ``return page()`` in the route."""
    csp = page_csp(html)

    def respond() -> HTMLResponse:
        return HTMLResponse(html, headers={"Content-Security-Policy": csp})

    return respond
