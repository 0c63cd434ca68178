"""OTLP/gRPC receiver: ``opentelemetry.proto.collector.trace.v1.TraceService/Export``.

gzip is handled by gRPC itself. Invalid requests end with INVALID_ARGUMENT, saturation with
UNAVAILABLE (retryable per the OTLP specification), a wrong token with UNAUTHENTICATED.

The method is registered with an identity request deserializer: ``Export`` gets the raw protobuf
bytes and hands them to the same decode path as OTLP/HTTP (the worker pool when there is one), so
the request is parsed once, off the server's GIL.
"""

from __future__ import annotations

import hmac
import logging
from concurrent import futures

import grpc
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc

from collector.config import ServerSettings
from collector.errors import PermanentError, RetryableError
from collector.metrics import Metrics
from collector.pipeline import Pipeline
from collector.receivers.payload import PROTOBUF

SERVICE = "opentelemetry.proto.collector.trace.v1.TraceService"

log = logging.getLogger("ragfault.grpc")


class TraceService(trace_service_pb2_grpc.TraceServiceServicer):
    def __init__(self, settings: ServerSettings, pipeline: Pipeline, metrics: Metrics) -> None:
        self.settings = settings
        self.pipeline = pipeline
        self.metrics = metrics

    def _authorized(self, context: grpc.ServicerContext) -> bool:
        token = self.settings.ingest_token
        if not token:
            return True
        for key, value in context.invocation_metadata():
            if key == "authorization":
                scheme, _, given = str(value).partition(" ")
                return scheme.lower() == "bearer" and hmac.compare_digest(
                    given.strip().encode(), token.encode()
                )
        return False

    def Export(  # noqa: N802 (generated name)
        self,
        request: bytes | trace_service_pb2.ExportTraceServiceRequest,
        context: grpc.ServicerContext,
    ) -> trace_service_pb2.ExportTraceServiceResponse:
        """``request`` is the serialized ExportTraceServiceRequest (or, called directly, a message)."""
        if not self._authorized(context):
            self.metrics.inc("ragfault_requests_total", transport="grpc", outcome="unauthenticated")
            context.abort(grpc.StatusCode.UNAUTHENTICATED, "missing or invalid bearer token")
        try:
            if isinstance(request, bytes):
                limit = self.settings.max_decompressed_bytes
                result = self.pipeline.export_body(request, PROTOBUF, None, limit)
            else:
                result = self.pipeline.export(request)
        except PermanentError as exc:
            self.metrics.inc("ragfault_requests_total", transport="grpc", outcome="invalid")
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc))
        except (RetryableError, futures.TimeoutError) as exc:
            self.metrics.inc("ragfault_requests_total", transport="grpc", outcome="unavailable")
            context.abort(grpc.StatusCode.UNAVAILABLE, str(exc) or "commit timed out")
        self.metrics.inc("ragfault_requests_total", transport="grpc", outcome="ok")
        resp = trace_service_pb2.ExportTraceServiceResponse()
        if result.rejected or result.message:
            resp.partial_success.rejected_spans = result.rejected
            resp.partial_success.error_message = result.message
        return resp


def start_grpc(settings: ServerSettings, pipeline: Pipeline, metrics: Metrics) -> tuple[grpc.Server, int]:
    """Start the gRPC server; returns it and the bound port."""
    server = grpc.server(
        futures.ThreadPoolExecutor(max_workers=8, thread_name_prefix="ragfault-grpc"),
        options=[
            ("grpc.max_receive_message_length", settings.max_decompressed_bytes),
            ("grpc.max_send_message_length", 4 << 20),
        ],
        maximum_concurrent_rpcs=64,
    )
    service = TraceService(settings, pipeline, metrics)
    handler = grpc.unary_unary_rpc_method_handler(
        service.Export,
        request_deserializer=None,  # raw bytes: decoded by the pipeline
        response_serializer=trace_service_pb2.ExportTraceServiceResponse.SerializeToString,
    )
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(SERVICE, {"Export": handler}),))
    port = server.add_insecure_port(f"{settings.host}:{settings.grpc_port}")
    if port == 0:
        raise OSError(f"cannot bind gRPC port {settings.grpc_port}")
    server.start()
    return server, port
