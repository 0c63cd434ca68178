"""OTLP/HTTP receiver: ``POST /v1/traces``, ``/v1/logs`` and ``/v1/metrics`` (protobuf or JSON, gzip
or deflate).

Status codes follow https://opentelemetry.io/docs/specs/otlp/#otlphttp-response: 200 with an
``ExportTraceServiceResponse`` (``partial_success`` when spans were rejected), 400 for a payload that
can never succeed, 413 when the body is too large, 415 for an unknown content type, 503 with
``Retry-After`` when the queue is full so exporters retry. The response uses the request's encoding.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import cast

import anyio
from fastapi import APIRouter, Request, Response

from collector.config import ServerSettings
from collector.ingest.build import TRACES
from collector.ingest.pipeline import Pipeline
from collector.metrics import Metrics
from collector.receivers.inflight import ByteBudget
from collector.receivers.payload import (
    JSON,
    LOGS,
    METRICS,
    PROTOBUF,
    encode_response,
    encode_signal_response,
    encode_status,
    inflated_size,
)
from ragfault_core.auth import check_token
from ragfault_core.errors import PayloadTooLarge, PermanentError, RagfaultError, RetryableError, status_of

__all__ = ["check_bearer", "make_router"]


class BodyTimeout(PermanentError):
    """A request body stalled for ``body_timeout_seconds``: 408, and the connection is closed."""

    http_status = 408


def check_bearer(request: Request, token: str | None) -> None:
    """``ragfault_core.auth.check_token`` over every Authorization header of ``request``."""
    check_token(request.headers.getlist("authorization"), token)


async def read_body(
    request: Request,
    limit: int,
    *,
    budget: ByteBudget | None = None,
    held: list[int] | None = None,
    idle_timeout: float | None = None,
) -> bytes:
    """The request body, refused with 413 as soon as it is known to exceed ``limit``.

    With ``budget``, the body's bytes are taken from it before they are read (its Content-Length at
    once, else each chunk as it arrives; ``IngestBusy`` when they do not fit) and added to
    ``held[0]``, which the caller gives back. A body that sends nothing for ``idle_timeout``
    seconds ends with ``BodyTimeout`` (408)."""
    length = request.headers.get("content-length")
    known = length is not None and length.isdigit()
    if known and int(length or 0) > limit:
        raise PayloadTooLarge(f"request body of {length} bytes exceeds {limit}")
    counter = held if held is not None else [0]
    if budget is not None and known:
        budget.take(int(length or 0))
        counter[0] += int(length or 0)
    # with a Content-Length the body is read into one buffer of that size: joining chunks would
    # hold it twice at the end
    buf = bytearray(int(length or 0)) if known else None
    chunks = []
    size = 0
    stream = request.stream().__aiter__()
    while True:
        try:
            chunk = await asyncio.wait_for(stream.__anext__(), idle_timeout)
        except StopAsyncIteration:
            break
        except TimeoutError as exc:
            raise BodyTimeout(f"no body bytes for {idle_timeout:g} s (body_timeout_seconds)") from exc
        start, size = size, size + len(chunk)
        if size > limit:
            raise PayloadTooLarge(f"request body exceeds {limit} bytes")
        if budget is not None and size > counter[0]:  # more than announced, or no Content-Length
            budget.take(size - counter[0])
            counter[0] = size
        if buf is not None and size <= len(buf):
            buf[start:size] = chunk
        else:
            chunks.append(chunk)
    if buf is None:
        return b"".join(chunks)
    if size != len(buf) or chunks:  # not what was announced (the server framing should not allow it)
        return bytes(buf[: min(size, len(buf))]) + b"".join(chunks)
    return cast(bytes, buf)  # a bytearray, which every decoder (and pickle) takes as bytes


def _kind_of(request: Request) -> str:
    ct = (request.headers.get("content-type") or "").lower()
    return JSON if "json" in ct else PROTOBUF


def make_router(settings: ServerSettings, pipeline: Pipeline, metrics: Metrics) -> APIRouter:
    router = APIRouter()
    # requests decoding at once: threads in-process, or bodies handed to the worker pool
    limiter = anyio.CapacityLimiter(pipeline.pool.max_pending if pipeline.pool is not None else 4)

    async def export(request: Request, signal: str, encode_ok: Callable[[int, str, str], bytes]) -> Response:
        kind = _kind_of(request)
        media = "application/json" if kind == JSON else "application/x-protobuf"
        held = [0]  # bytes this request holds in pipeline.budget
        try:
            check_bearer(request, settings.ingest_token)
            if pipeline.writer.queued_spans >= pipeline.writer.max_queue_spans:
                metrics.inc("ragfault_ingest_throttled_total")
                raise RetryableError("ingest queue full", retry_after=1)
            body = await read_body(
                request,
                settings.max_body_bytes,
                budget=pipeline.budget,
                held=held,
                idle_timeout=settings.body_timeout_seconds,
            )
            ctype = request.headers.get("content-type")
            cenc = request.headers.get("content-encoding")
            # a compressed body decodes at its inflated size: take that from the budget too (a
            # 120 KB gzip body inflating to 120 MB counted 120 KB, and six of them took 2.7 GB),
            # then what its rows may build (``Pipeline.reserve``); the decoder may not inflate past
            # it (zlib would refuse a wrong trailer only at the end)
            inflated = inflated_size(body, cenc, settings.max_decompressed_bytes)
            if inflated > held[0]:
                pipeline.budget.take(inflated - held[0])
                held[0] = inflated
            async with limiter:  # decode + build off the event loop, in a worker or this thread
                batch = await anyio.to_thread.run_sync(
                    pipeline.decode_blocking, signal, body, ctype, cenc, max(inflated, 1), held
                )
            del body
            result = await pipeline.export_batch(batch)
        except (RagfaultError, TimeoutError) as exc:
            st = status_of(exc)
            outcome = "unauthorized" if st.http == 401 else str(st.http)
            metrics.inc("ragfault_requests_total", transport="http", outcome=outcome)
            return Response(
                encode_status(st.grpc, st.message, kind), st.http, media_type=media, headers=st.headers
            )
        finally:
            pipeline.budget.give(held[0])
        metrics.inc("ragfault_requests_total", transport="http", outcome="200")
        return Response(encode_ok(result.rejected, result.message, kind), 200, media_type=media)

    @router.post("/v1/traces", include_in_schema=True, summary="OTLP/HTTP trace export")
    async def export_traces(request: Request) -> Response:
        return await export(request, TRACES, encode_response)

    @router.post("/v1/logs", include_in_schema=True, summary="OTLP/HTTP logs export")
    async def export_logs(request: Request) -> Response:
        return await export(request, LOGS, lambda r, m, k: encode_signal_response(LOGS, r, m, k))

    @router.post("/v1/metrics", include_in_schema=True, summary="OTLP/HTTP metrics export")
    async def export_metrics(request: Request) -> Response:
        return await export(request, METRICS, lambda r, m, k: encode_signal_response(METRICS, r, m, k))

    return router
