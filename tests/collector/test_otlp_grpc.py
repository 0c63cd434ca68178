"""OTLP/gRPC receiver: real exporters (plain and gzip), partial success, errors, backpressure, auth."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import grpc
import pytest
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2_grpc
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from tests.collector.otlp_build import new_trace_id, raw_export, request, span
from tests.conftest import Server
from tests.otel_helpers import grpc_provider
from tests.waiting import wait_until


@pytest.fixture
def stub(server: Server) -> Iterator[trace_service_pb2_grpc.TraceServiceStub]:
    with grpc.insecure_channel(server.grpc_endpoint) as channel:
        yield trace_service_pb2_grpc.TraceServiceStub(channel)


@pytest.mark.parametrize("use_gzip", [False, True], ids=["plain", "gzip"])
def test_sdk_grpc_exporter_spans_become_queryable(server: Server, use_gzip: bool) -> None:
    service = f"grpc-app-{'gz' if use_gzip else 'plain'}"
    provider = grpc_provider(server.grpc_endpoint, service=service, gzip=use_gzip)
    tracer = provider.get_tracer("tests")
    with tracer.start_as_current_span("root") as root:
        root.set_attribute("n", 1.5)
        for i in range(3):
            with tracer.start_as_current_span(f"child{i}"):
                pass
        trace_hex = format(root.get_span_context().trace_id, "032x")
    assert provider.force_flush(10_000)
    provider.shutdown()
    rows = server.sql("SELECT name, service_name FROM spans WHERE trace_id = $t ORDER BY name", t=trace_hex)
    assert rows == [["child0", service], ["child1", service], ["child2", service], ["root", service]]
    assert server.scalar("SELECT attributes->>'$.n' FROM spans WHERE trace_id = $t AND name = 'root'",
                         t=trace_hex) == "1.5"  # fmt: skip


@pytest.mark.parametrize("compression", [None, grpc.Compression.Gzip], ids=["plain", "gzip"])
def test_partial_success_stores_the_valid_spans(
    server: Server, stub: trace_service_pb2_grpc.TraceServiceStub, compression: grpc.Compression | None
) -> None:
    tid = new_trace_id()
    req = request([span(tid, name="ok1"), span(tid, name="ok2"), span(b"\x00" * 16, name="zero-trace"),
                   span(tid, span_id=b"\x01" * 3, name="short-span")])  # fmt: skip
    resp = stub.Export(req, timeout=10, compression=compression)
    assert resp.partial_success.rejected_spans == 2
    assert "trace_id" in resp.partial_success.error_message
    assert server.scalar("SELECT count(*) FROM spans WHERE trace_id = $t", t=tid.hex()) == 2

    resp = stub.Export(request([span(tid, name="ok3")]), timeout=10, compression=compression)
    assert not resp.HasField("partial_success")
    assert server.scalar("SELECT count(*) FROM spans WHERE trace_id = $t", t=tid.hex()) == 3


def test_garbage_is_invalid_argument(server: Server) -> None:
    with grpc.insecure_channel(server.grpc_endpoint) as channel:
        raw = raw_export(channel)
        with pytest.raises(grpc.RpcError) as info:
            raw(b"\xff\xff\xff\xff garbage", timeout=10)
        # the receiver takes the raw bytes and decodes them itself: a malformed payload is the
        # caller's error (INVALID_ARGUMENT, as OTLP/HTTP answers 400), and the server still works
        assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert server.http.get("/healthz").status_code == 200


@pytest.mark.server_settings(max_queue_spans=2)
def test_full_queue_is_unavailable(server: Server) -> None:
    srv = server
    release, started = threading.Event(), threading.Event()

    def hold(_con: object) -> None:  # a writer job: the queue fills behind it
        started.set()
        release.wait(60)

    srv.runtime.writer.submit_job(hold)
    assert started.wait(10)
    tid = new_trace_id()
    results: dict[str, object] = {}
    with grpc.insecure_channel(srv.grpc_endpoint) as channel:
        stub = trace_service_pb2_grpc.TraceServiceStub(channel)

        def first() -> None:
            results["first"] = stub.Export(request([span(tid, name="a"), span(tid, name="b")]), timeout=30)

        t = threading.Thread(target=first)
        try:
            t.start()
            wait_until(lambda: srv.runtime.writer.queued_spans, lambda n: n >= 2, what="the spans queued",
                       timeout=10, every=0.01)  # fmt: skip
            with pytest.raises(grpc.RpcError) as info:
                stub.Export(request([span(tid, name="c")]), timeout=10)
            assert info.value.code() == grpc.StatusCode.UNAVAILABLE
        finally:
            release.set()
            t.join(30)
        stub.Export(request([span(tid, name="c")]), timeout=10)
    assert "first" in results
    assert srv.scalar("SELECT count(*) FROM spans WHERE trace_id = $t", t=tid.hex()) == 3


@pytest.mark.server_settings(ingest_token="in-secret")
def test_ingest_token_required_over_grpc(server: Server) -> None:
    srv = server
    tid = new_trace_id()
    with grpc.insecure_channel(srv.grpc_endpoint) as channel:
        stub = trace_service_pb2_grpc.TraceServiceStub(channel)
        for metadata in (None, [("authorization", "Bearer wrong")], [("authorization", "in-secret")]):
            with pytest.raises(grpc.RpcError) as info:
                stub.Export(request([span(tid)]), timeout=10, metadata=metadata)
            assert info.value.code() == grpc.StatusCode.UNAUTHENTICATED, metadata
        stub.Export(
            request([span(tid, name="raw")]), timeout=10, metadata=[("authorization", "Bearer in-secret")]
        )

    # The real exporter with the header configured, over gzip.
    provider = TracerProvider()
    provider.add_span_processor(
        SimpleSpanProcessor(
            OTLPSpanExporter(
                endpoint=srv.grpc_endpoint,
                insecure=True,
                headers={"authorization": "Bearer in-secret"},
                compression=grpc.Compression.Gzip,
            )
        )
    )
    with provider.get_tracer("t").start_as_current_span("sdk") as s:
        sdk_trace = format(s.get_span_context().trace_id, "032x")
    provider.shutdown()
    assert srv.scalar("SELECT count(*) FROM spans WHERE trace_id IN ($a, $b)", a=tid.hex(), b=sdk_trace) == 2
