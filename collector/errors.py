"""The error hierarchy of ragfault, mapped to transport status codes in one place.

::

    RagfaultError
    ├── PermanentError          the request can never succeed: HTTP 400 / gRPC INVALID_ARGUMENT
    │   ├── PayloadTooLarge     body or inflated body over the limit: HTTP 413 / INVALID_ARGUMENT
    │   ├── UnsupportedMediaType unknown Content-Type: HTTP 415
    │   └── QueryRefused        SQL that writes, reaches files or the network: HTTP 400
    │       └── QueryResultTooLarge  a result over sql_max_result_bytes: HTTP 413
    ├── RetryableError          try again later: HTTP 503 + Retry-After / gRPC UNAVAILABLE
    │   ├── QueryTimeout        a read query ran past its time limit: HTTP 408 (retryable by the user)
    │   └── TooManyQueries      sql_max_concurrent queries running: HTTP 429 + Retry-After
    │   └── StoreUnavailable    the database cannot be written (a full disk): the server exits 1
    ├── Unauthorized            missing or wrong bearer token: HTTP 401 / UNAUTHENTICATED
    └── ConfigError             bad settings: the process exits non-zero at startup
"""

from __future__ import annotations


class RagfaultError(Exception):
    """Base of every error ragfault raises on purpose."""

    http_status = 500


class PermanentError(RagfaultError):
    """The input is invalid and re-sending it will not help."""

    http_status = 400


class PayloadTooLarge(PermanentError):
    http_status = 413


class UnsupportedMediaType(PermanentError):
    http_status = 415


class QueryRefused(PermanentError):
    """A SQL statement that is not a plain read."""


class RetryableError(RagfaultError):
    """The service is saturated or not ready; the client should retry after ``retry_after`` seconds."""

    http_status = 503

    def __init__(self, message: str, retry_after: float = 1.0) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class QueryTimeout(RetryableError):
    http_status = 408


class Unauthorized(RagfaultError):
    http_status = 401


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
