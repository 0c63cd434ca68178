"""OTLP/gRPC receiver: ``TraceService/Export``, ``LogsService/Export`` and ``MetricsService/Export``
(``opentelemetry.proto.collector.{trace,logs,metrics}.v1``).

gzip is handled by gRPC itself. Invalid requests end with INVALID_ARGUMENT, saturation with
UNAVAILABLE (retryable per the OTLP specification), a wrong token with UNAUTHENTICATED.

The method is registered with an identity request deserializer: ``Export`` gets the raw protobuf
bytes and hands them to the same decode path as OTLP/HTTP (the worker pool when there is one), so
the request is parsed once, off the server's GIL.

Each ``Export`` is served as a request-streaming method (the wire is the same: a unary client sends
one message). Its handler then reads the message itself, after the token check, and holds the only
reference to it: the body is freed once a decode worker has it, as an HTTP body is. A unary
handler's caller in gRPC keeps the message until the call returns, so every call served held its
message through decoding and the commit, outside the byte budget, which counts the decoded batch
by then.

The receiver is a server component (``COMPONENT``) that starts last and stops first: the server
takes no gRPC export before everything behind it runs, and none while it stops.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from concurrent import futures
from typing import Any

import grpc
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc

from collector.components import Component, Context
from collector.config import ServerSettings
from collector.ingest.pipeline import Pipeline
from collector.metrics import Metrics
from collector.receivers.payload import LOGS, METRICS, PROTOBUF, signal_response
from ragfault_core.auth import check_token
from ragfault_core.errors import GRPC_UNAVAILABLE, RagfaultError, Unauthorized, status_of

SERVICE = "opentelemetry.proto.collector.trace.v1.TraceService"
LOGS_SERVICE = "opentelemetry.proto.collector.logs.v1.LogsService"
METRICS_SERVICE = "opentelemetry.proto.collector.metrics.v1.MetricsService"

log = logging.getLogger("ragfault.grpc")

_CODES = {code.value[0]: code for code in grpc.StatusCode}


class TraceService(trace_service_pb2_grpc.TraceServiceServicer):
    def __init__(self, settings: ServerSettings, pipeline: Pipeline, metrics: Metrics) -> None:
        self.settings = settings
        self.pipeline = pipeline
        self.metrics = metrics

    def message(self, requests: Iterator[bytes], context: grpc.ServicerContext) -> list[bytes]:
        """The call's one message (serialized), in a list for the pipeline to take it from, once the
        token is checked; a call without one ends with INVALID_ARGUMENT."""
        values = [str(v) for k, v in context.invocation_metadata() if k.lower() == "authorization"]
        try:
            check_token(values, self.settings.ingest_token)
        except Unauthorized as exc:
            self.metrics.inc("ragfault_requests_total", transport="grpc", outcome="unauthenticated")
            st = status_of(exc)
            context.abort(_CODES[st.grpc], st.message)
        body = next(requests, None)  # gRPC's iterator keeps no reference to what it gives
        if body is None:
            self.metrics.inc("ragfault_requests_total", transport="grpc", outcome="invalid")
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, "Export takes one request message")
            raise AssertionError("abort raises")  # for the type checker: abort does not return
        return [body]

    def Export(  # noqa: N802 (generated name)
        self, requests: Iterator[bytes], context: grpc.ServicerContext
    ) -> trace_service_pb2.ExportTraceServiceResponse:
        """``requests`` yields the serialized ExportTraceServiceRequest."""
        box = self.message(requests, context)
        try:
            result = self.pipeline.export_body(box, PROTOBUF, None, self.settings.max_decompressed_bytes)
        except (RagfaultError, futures.TimeoutError) as exc:
            st = status_of(exc)
            outcome = "unavailable" if st.grpc == GRPC_UNAVAILABLE else "invalid"
            self.metrics.inc("ragfault_requests_total", transport="grpc", outcome=outcome)
            context.abort(_CODES[st.grpc], st.message)
        self.metrics.inc("ragfault_requests_total", transport="grpc", outcome="ok")
        resp = trace_service_pb2.ExportTraceServiceResponse()
        if result.rejected or result.message:
            resp.partial_success.rejected_spans = result.rejected
            resp.partial_success.error_message = result.message
        return resp


class SignalService:
    """``LogsService`` or ``MetricsService``: the same checks and export path as traces."""

    def __init__(self, signal: str, traces: TraceService) -> None:
        self.signal = signal
        self.traces = traces

    def Export(self, requests: Iterator[bytes], context: grpc.ServicerContext) -> Any:  # noqa: N802 (generated name)
        t = self.traces
        box = t.message(requests, context)
        try:
            limit = t.settings.max_decompressed_bytes
            result = t.pipeline.export_body(box, PROTOBUF, None, limit, self.signal)
        except (RagfaultError, futures.TimeoutError) as exc:
            st = status_of(exc)
            outcome = "unavailable" if st.grpc == GRPC_UNAVAILABLE else "invalid"
            t.metrics.inc("ragfault_requests_total", transport="grpc", outcome=outcome)
            context.abort(_CODES[st.grpc], st.message)
        t.metrics.inc("ragfault_requests_total", transport="grpc", outcome="ok")
        return signal_response(self.signal, result.rejected, result.message)


def start_grpc(settings: ServerSettings, pipeline: Pipeline, metrics: Metrics) -> tuple[grpc.Server, int]:
    """Start the gRPC server; returns it and the bound port."""
    # a thread reads each call's message: at most grpc_max_concurrent_rpcs messages are held while
    # they wait for the byte budget; further calls get RESOURCE_EXHAUSTED from gRPC itself
    calls = settings.grpc_max_concurrent_rpcs
    server = grpc.server(
        futures.ThreadPoolExecutor(max_workers=calls, thread_name_prefix="ragfault-grpc"),
        options=[
            ("grpc.max_receive_message_length", settings.max_decompressed_bytes),
            ("grpc.max_send_message_length", 4 << 20),
        ],
        maximum_concurrent_rpcs=calls,
    )
    service = TraceService(settings, pipeline, metrics)
    handler = grpc.stream_unary_rpc_method_handler(
        service.Export,
        request_deserializer=None,  # raw bytes: decoded by the pipeline
        response_serializer=trace_service_pb2.ExportTraceServiceResponse.SerializeToString,
    )
    handlers = [grpc.method_handlers_generic_handler(SERVICE, {"Export": handler})]
    for signal, name in ((LOGS, LOGS_SERVICE), (METRICS, METRICS_SERVICE)):
        signal_handler = grpc.stream_unary_rpc_method_handler(
            SignalService(signal, service).Export,
            request_deserializer=None,  # raw bytes: decoded by the pipeline
            response_serializer=lambda resp: resp.SerializeToString(),
        )
        handlers.append(grpc.method_handlers_generic_handler(name, {"Export": signal_handler}))
    server.add_generic_rpc_handlers(tuple(handlers))
    port = server.add_insecure_port(f"{settings.host}:{settings.grpc_port}")
    if port == 0:
        raise OSError(f"cannot bind gRPC port {settings.grpc_port}")
    server.start()
    return server, port


STOP_GRACE_SECONDS = 5.0  # calls in flight at stop finish for this long, then are cancelled


class GrpcReceiver:
    """The OTLP/gRPC server as a component's service: it binds and serves at ``start``; ``port``
    is the port it bound (``[server] grpc_port``, or the free one picked for 0), known from then
    on, after ``stop`` too."""

    def __init__(self, ctx: Context) -> None:
        self.settings, self.pipeline, self.metrics = ctx.settings, ctx.pipeline, ctx.metrics
        self.server: grpc.Server | None = None
        self.port: int | None = None

    def start(self) -> None:
        self.server, self.port = start_grpc(self.settings, self.pipeline, self.metrics)

    def stop(self) -> None:
        if self.server is not None:
            self.server.stop(grace=STOP_GRACE_SECONDS).wait(2 * STOP_GRACE_SECONDS)


# last of the built-in components (a higher order would start after the receiver)
COMPONENT = Component("grpc", service=GrpcReceiver, order=1000)
