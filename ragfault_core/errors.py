"""The error hierarchy of ragfault, mapped to transport status codes in one place.

::

    RagfaultError
    ├── PermanentError          the request can never succeed: HTTP 400 / gRPC INVALID_ARGUMENT
    │   ├── PayloadTooLarge     body or inflated body over the limit: HTTP 413 / INVALID_ARGUMENT
    │   ├── UnsupportedMediaType unknown or missing Content-Type: HTTP 415
    │   ├── UntrustedHost       a Host header outside ``trusted_hosts`` (DNS rebinding): HTTP 400
    │   ├── CrossOrigin         a state change sent from another origin: HTTP 403 / PERMISSION_DENIED
    │   └── QueryRefused        SQL that writes, reaches files or the network: HTTP 400
    │       └── QueryResultTooLarge  a result over sql_max_result_bytes: HTTP 413
    ├── RetryableError          try again later: HTTP 503 + Retry-After / gRPC UNAVAILABLE
    │   ├── QueryTimeout        a read query ran past its time limit: HTTP 408 (retryable by the user)
    │   ├── TooManyQueries      sql_max_concurrent queries running: HTTP 429 + Retry-After
    │   └── StoreUnavailable    the database cannot be written (a full disk): the server exits 1
    ├── Unauthorized            missing or wrong bearer token: HTTP 401 / UNAUTHENTICATED
    └── ConfigError             bad settings: the process exits non-zero at startup

``status_of(exc)`` is the one mapping every transport uses (the OTLP/HTTP and gRPC receivers, the
API's error handler, the web guard): it also covers the foreign errors that mean "try again"
(a commit that timed out).
"""

from __future__ import annotations

from concurrent import futures
from dataclasses import dataclass

# gRPC status codes (grpc.StatusCode values), here so that this module imports no transport
GRPC_INVALID_ARGUMENT = 3
GRPC_PERMISSION_DENIED = 7
GRPC_INTERNAL = 13
GRPC_UNAVAILABLE = 14
GRPC_UNAUTHENTICATED = 16


class RagfaultError(Exception):
    """Base of every error ragfault raises on purpose."""

    http_status = 500
    grpc_code = GRPC_INTERNAL


class PermanentError(RagfaultError):
    """The input is invalid and re-sending it will not help."""

    http_status = 400
    grpc_code = GRPC_INVALID_ARGUMENT


class PayloadTooLarge(PermanentError):
    http_status = 413


class UnsupportedMediaType(PermanentError):
    http_status = 415


class UntrustedHost(PermanentError):
    """The request's Host is not one of ``trusted_hosts`` (a DNS-rebinding page would send its own)."""


class CrossOrigin(PermanentError):
    """A state-changing request whose Origin is not the server's own."""

    http_status = 403
    grpc_code = GRPC_PERMISSION_DENIED


class QueryRefused(PermanentError):
    """A SQL statement that is not a plain read."""


class RetryableError(RagfaultError):
    """The service is saturated or not ready; the client should retry after ``retry_after`` seconds."""

    http_status = 503
    grpc_code = GRPC_UNAVAILABLE

    def __init__(self, message: str, retry_after: float = 1.0) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class QueryTimeout(RetryableError):
    http_status = 408


class Unauthorized(RagfaultError):
    http_status = 401
    grpc_code = GRPC_UNAUTHENTICATED


class ConfigError(RagfaultError):
    """Invalid configuration, detected at startup."""


class QueryResultTooLarge(QueryRefused):
    """A read query's result is over ``sql_max_result_bytes``: HTTP 413."""

    http_status = 413


class TooManyQueries(RetryableError):
    """``sql_max_concurrent`` queries are running: HTTP 429 + Retry-After."""

    http_status = 429


class StoreUnavailable(RetryableError):
    """The database cannot be written (no space left) or DuckDB invalidated it after a failed
    write: ``/healthz`` answers 503, and the server exits 1 for its supervisor to restart it."""


@dataclass(frozen=True)
class Status:
    """How one error is answered: HTTP status, gRPC code, headers (Retry-After, WWW-Authenticate)."""

    http: int
    grpc: int
    message: str
    headers: dict[str, str]
    error: str  # the error's class name, for JSON bodies and metric labels


def status_of(exc: BaseException) -> Status:
    """The answer to ``exc`` on every transport. Errors that are not ragfault's are 500 / INTERNAL,
    except timeouts (a commit that did not finish in time), which are retryable."""
    if isinstance(exc, (TimeoutError, futures.TimeoutError)) and not isinstance(exc, RagfaultError):
        exc = RetryableError(str(exc) or "commit timed out", retry_after=5)
    if not isinstance(exc, RagfaultError):
        return Status(500, GRPC_INTERNAL, "internal error", {}, "InternalError")
    headers: dict[str, str] = {}
    if isinstance(exc, RetryableError) and exc.http_status in (429, 503):
        headers["Retry-After"] = str(max(1, int(exc.retry_after)))
    if isinstance(exc, Unauthorized):
        headers["WWW-Authenticate"] = 'Bearer, Basic realm="ragfault"'
    return Status(exc.http_status, exc.grpc_code, str(exc), headers, type(exc).__name__)
