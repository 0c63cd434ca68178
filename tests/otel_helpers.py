"""Real OpenTelemetry SDK tracer providers exporting to a test server."""

from __future__ import annotations

from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcExporter
from opentelemetry.exporter.otlp.proto.http import Compression as HttpCompression
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HttpExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor


def http_provider(
    url: str, service: str = "test-app", gzip: bool = False, batch: bool = False
) -> TracerProvider:
    exporter = HttpExporter(
        endpoint=f"{url}/v1/traces",
        compression=HttpCompression.Gzip if gzip else HttpCompression.NoCompression,
    )
    provider = TracerProvider(resource=Resource.create({"service.name": service}))
    provider.add_span_processor(BatchSpanProcessor(exporter) if batch else SimpleSpanProcessor(exporter))
    return provider


def grpc_provider(endpoint: str, service: str = "test-app", gzip: bool = False) -> TracerProvider:
    from grpc import Compression

    exporter = GrpcExporter(endpoint=endpoint, insecure=True, compression=Compression.Gzip if gzip else None)
    provider = TracerProvider(resource=Resource.create({"service.name": service}))
    provider.add_span_processor(BatchSpanProcessor(exporter))
    return provider
