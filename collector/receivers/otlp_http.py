"""OTLP/HTTP receiver: ``POST /v1/traces`` (protobuf or JSON, gzip or deflate).

Status codes follow https://opentelemetry.io/docs/specs/otlp/#otlphttp-response: 200 with an
``ExportTraceServiceResponse`` (``partial_success`` when spans were rejected), 400 for a payload that
can never succeed, 413 when the body is too large, 415 for an unknown content type, 503 with
``Retry-After`` when the queue is full so exporters retry. The response uses the request's encoding.
"""

from __future__ import annotations

import asyncio
import hmac

import anyio
from fastapi import APIRouter, Request, Response

from collector.config import ServerSettings
from collector.errors import PayloadTooLarge, PermanentError, RetryableError, Unauthorized
from collector.metrics import Metrics
from collector.pipeline import Pipeline
from collector.receivers.payload import JSON, PROTOBUF, encode_response, encode_status

GRPC_INVALID_ARGUMENT = 3
GRPC_UNAVAILABLE = 14
GRPC_UNAUTHENTICATED = 16


def check_bearer(request: Request, token: str | None) -> None:
    if not token:
        return
    header = request.headers.get("authorization", "")
    scheme, _, given = header.partition(" ")
    if scheme.lower() != "bearer" or not hmac.compare_digest(given.strip().encode(), token.encode()):
        raise Unauthorized("missing or invalid bearer token")


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

    @router.post("/v1/traces", include_in_schema=True, summary="OTLP/HTTP trace export")
    async def export_traces(request: Request) -> Response:
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

            limit = settings.max_decompressed_bytes
            async with limiter:  # decode + flatten off the event loop
                if pipeline.pool is not None:
                    fut = pipeline.decode_in_pool(body, ctype, cenc, limit)
                    batch = pipeline.received(await asyncio.wrap_future(fut))
                else:
                    batch = await anyio.to_thread.run_sync(pipeline.decode_here, body, ctype, cenc, limit)
            result = await pipeline.export_batch(batch)
        except Unauthorized as exc:
            metrics.inc("ragfault_requests_total", transport="http", outcome="unauthorized")
            return Response(encode_status(GRPC_UNAUTHENTICATED, str(exc), kind), 401, media_type=media)
        except PermanentError as exc:
            metrics.inc("ragfault_requests_total", transport="http", outcome=str(exc.http_status))
            return Response(
                encode_status(GRPC_INVALID_ARGUMENT, str(exc), kind), exc.http_status, media_type=media
            )
        except (TimeoutError, RetryableError) as exc:
            metrics.inc("ragfault_requests_total", transport="http", outcome="503")
            retry_after = getattr(exc, "retry_after", 5)
            return Response(
                encode_status(GRPC_UNAVAILABLE, str(exc) or "commit timed out", kind),
                503,
                media_type=media,
                headers={"Retry-After": str(max(1, int(retry_after)))},
            )
        metrics.inc("ragfault_requests_total", transport="http", outcome="200")
        return Response(encode_response(result.rejected, result.message, kind), 200, media_type=media)

    return router
