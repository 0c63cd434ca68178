"""OTLP/HTTP receiver: ``POST /v1/traces``, ``/v1/logs`` and ``/v1/metrics`` (protobuf or JSON, gzip
or deflate).

Status codes follow https://opentelemetry.io/docs/specs/otlp/#otlphttp-response: 200 with an
``ExportTraceServiceResponse`` (``partial_success`` when spans were rejected), 400 for a payload that
can never succeed, 413 when the body is too large, 415 for an unknown content type, 503 with
``Retry-After`` when the queue is full so exporters retry. The response uses the request's encoding.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import anyio
from fastapi import APIRouter, Request, Response

from collector.auth import check_token
from collector.batch import ArrowBatch
from collector.config import ServerSettings
from collector.errors import (
    GRPC_INVALID_ARGUMENT,
    GRPC_UNAUTHENTICATED,
    GRPC_UNAVAILABLE,
    PayloadTooLarge,
    RagfaultError,
    RetryableError,
    status_of,
)
from collector.metrics import Metrics
from collector.pipeline import Pipeline
from collector.receivers.payload import (
    JSON,
    LOGS,
    METRICS,
    PROTOBUF,
    encode_response,
    encode_signal_response,
    encode_status,
)

__all__ = ["GRPC_INVALID_ARGUMENT", "GRPC_UNAUTHENTICATED", "GRPC_UNAVAILABLE", "check_bearer", "make_router"]

# body, Content-Type, Content-Encoding, inflated size limit -> the flattened batch
Decode = Callable[[bytes, str | None, str | None, int], Awaitable[ArrowBatch]]


def check_bearer(request: Request, token: str | None) -> None:
    """``collector.auth.check_token`` over every Authorization header of ``request``."""
    check_token(request.headers.getlist("authorization"), token)


async def read_body(request: Request, limit: int) -> bytes:
    """The request body, refused with 413 as soon as it is known to exceed ``limit``."""
    length = request.headers.get("content-length")
    if length is not None and length.isdigit() and int(length) > limit:
        raise PayloadTooLarge(f"request body of {length} bytes exceeds {limit}")
    chunks = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise PayloadTooLarge(f"request body exceeds {limit} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


def _kind_of(request: Request) -> str:
    ct = (request.headers.get("content-type") or "").lower()
    return JSON if "json" in ct else PROTOBUF


def make_router(settings: ServerSettings, pipeline: Pipeline, metrics: Metrics) -> APIRouter:
    router = APIRouter()
    # requests decoding at once: threads in-process, or bodies handed to the worker pool
    limiter = anyio.CapacityLimiter(pipeline.pool.max_pending if pipeline.pool is not None else 4)

    async def decode_traces(body: bytes, ctype: str | None, cenc: str | None, limit: int) -> ArrowBatch:
        async with limiter:  # decode + flatten off the event loop
            if pipeline.pool is not None:
                fut = pipeline.decode_in_pool(body, ctype, cenc, limit)
                return pipeline.received(await asyncio.wrap_future(fut))
            return await anyio.to_thread.run_sync(pipeline.decode_here, body, ctype, cenc, limit)

    def decode_signal(signal: str) -> Decode:
        async def decode(body: bytes, ctype: str | None, cenc: str | None, limit: int) -> ArrowBatch:
            async with limiter:
                return await anyio.to_thread.run_sync(
                    pipeline.decode_signal_here, signal, body, ctype, cenc, limit
                )

        return decode

    async def export(
        request: Request, decode: Decode, encode_ok: Callable[[int, str, str], bytes]
    ) -> Response:
        kind = _kind_of(request)
        media = "application/json" if kind == JSON else "application/x-protobuf"
        try:
            check_bearer(request, settings.ingest_token)
            if pipeline.writer.queued_spans >= pipeline.writer.max_queue_spans:
                metrics.inc("ragfault_ingest_throttled_total")
                raise RetryableError("ingest queue full", retry_after=1)
            body = await read_body(request, settings.max_body_bytes)
            ctype = request.headers.get("content-type")
            cenc = request.headers.get("content-encoding")
            batch = await decode(body, ctype, cenc, settings.max_decompressed_bytes)
            result = await pipeline.export_batch(batch)
        except (RagfaultError, TimeoutError) as exc:
            st = status_of(exc)
            outcome = "unauthorized" if st.http == 401 else str(st.http)
            metrics.inc("ragfault_requests_total", transport="http", outcome=outcome)
            body = encode_status(st.grpc, st.message, kind)
            return Response(body, st.http, media_type=media, headers=st.headers)
        metrics.inc("ragfault_requests_total", transport="http", outcome="200")
        return Response(encode_ok(result.rejected, result.message, kind), 200, media_type=media)

    decode_logs, decode_metrics = decode_signal(LOGS), decode_signal(METRICS)

    @router.post("/v1/traces", include_in_schema=True, summary="OTLP/HTTP trace export")
    async def export_traces(request: Request) -> Response:
        return await export(request, decode_traces, encode_response)

    @router.post("/v1/logs", include_in_schema=True, summary="OTLP/HTTP logs export")
    async def export_logs(request: Request) -> Response:
        return await export(request, decode_logs, lambda r, m, k: encode_signal_response(LOGS, r, m, k))

    @router.post("/v1/metrics", include_in_schema=True, summary="OTLP/HTTP metrics export")
    async def export_metrics(request: Request) -> Response:
        return await export(request, decode_metrics, lambda r, m, k: encode_signal_response(METRICS, r, m, k))

    return router
