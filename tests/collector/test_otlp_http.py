"""OTLP/HTTP receiver: real exporters, OTLP/JSON, status codes, limits, backpressure and auth."""

from __future__ import annotations

import gzip
import threading
import time
from collections.abc import Iterator

import httpx
import orjson
import pytest
from google.rpc import status_pb2
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse
from opentelemetry.sdk.trace.export import SpanExportResult

from tests.collector.otlp_build import json_request, new_span_id, new_trace_id, request, span
from tests.conftest import Server, StartServer
from tests.otel_helpers import http_provider
from tests.waiting import wait_equal, wait_until

PB = {"Content-Type": "application/x-protobuf"}
JS = {"Content-Type": "application/json"}


def count_spans(server: Server, trace_hex: str) -> int:
    return int(server.scalar("SELECT count(*) FROM spans WHERE trace_id = $t", t=trace_hex))


# --- real exporters --------------------------------------------------------------------------


@pytest.mark.parametrize("use_gzip", [False, True], ids=["plain", "gzip"])
def test_sdk_http_exporter_spans_become_queryable(server: Server, use_gzip: bool) -> None:
    service = f"http-app-{'gz' if use_gzip else 'plain'}"
    provider = http_provider(server.url, service=service, gzip=use_gzip, batch=True)
    tracer = provider.get_tracer("tests")
    with tracer.start_as_current_span("root") as root:
        root.set_attribute("answer", 42)
        root.set_attribute("tags", ["a", "b"])
        with tracer.start_as_current_span("child"):
            pass
        trace_hex = format(root.get_span_context().trace_id, "032x")
    assert provider.force_flush(10_000)
    provider.shutdown()

    # The exporter only gets success after the commit, so the spans are there right away.
    rows = server.sql(
        "SELECT name, parent_span_id IS NULL, service_name, attributes->>'$.answer', attributes->'$.tags' "
        "FROM spans WHERE trace_id = $t ORDER BY name",
        t=trace_hex,
    )
    assert [r[0] for r in rows] == ["child", "root"]
    assert rows[1][1:] == [True, service, "42", '["a","b"]']
    assert rows[0][1] is False
    assert server.scalar("SELECT span_count FROM traces WHERE trace_id = $t", t=trace_hex) == 2


# --- protobuf and OTLP/JSON ------------------------------------------------------------------


def test_protobuf_request_answers_protobuf(server: Server) -> None:
    tid = new_trace_id()
    body = request([span(tid, name="a"), span(tid, name="b")]).SerializeToString()
    r = server.http.post("/v1/traces", content=body, headers=PB)
    assert r.status_code == 200, r.content
    assert r.headers["content-type"].startswith("application/x-protobuf")
    resp = ExportTraceServiceResponse.FromString(r.content)
    assert not resp.HasField("partial_success")
    assert count_spans(server, tid.hex()) == 2


def test_gzip_protobuf_request(server: Server) -> None:
    tid = new_trace_id()
    body = gzip.compress(request([span(tid)]).SerializeToString())
    r = server.http.post("/v1/traces", content=body, headers={**PB, "Content-Encoding": "gzip"})
    assert r.status_code == 200, r.content
    assert count_spans(server, tid.hex()) == 1


def test_otlp_json_camel_case_hex_ids_enum_numbers_int64_strings(server: Server) -> None:
    tid, root_id, child_id = new_trace_id(), new_span_id(), new_span_id()
    now = time.time_ns()
    spans = [
        {
            "traceId": tid.hex(),
            "spanId": root_id.hex(),
            "name": "root",
            "kind": 2,  # enum as number
            "startTimeUnixNano": str(now - 5_000_000),  # int64 as string
            "endTimeUnixNano": str(now),
            "attributes": [
                {"key": "big", "value": {"intValue": "9007199254740993"}},
                {"key": "flag", "value": {"boolValue": True}},
                {"key": "list", "value": {"arrayValue": {"values": [{"stringValue": "x"}, {"intValue": 3}]}}},
            ],
            "status": {"code": "STATUS_CODE_ERROR", "message": "boom"},  # enum as name
            "someFieldFromTheFuture": {"nested": [1, 2, 3]},  # unknown fields are ignored
        },
        {
            "traceId": tid.hex().upper(),
            "spanId": child_id.hex(),
            "parentSpanId": root_id.hex(),
            "name": "child",
            "kind": "SPAN_KIND_CLIENT",
            "startTimeUnixNano": now - 4_000_000,  # int64 as a number works too
            "endTimeUnixNano": now - 1_000_000,
            "events": [{"timeUnixNano": str(now - 2_000_000), "name": "ev", "attributes": []}],
            "links": [{"traceId": new_trace_id().hex(), "spanId": new_span_id().hex()}],
        },
    ]
    doc = json_request(spans, service="json-app")
    doc["unknownTopLevel"] = True
    r = server.http.post("/v1/traces", content=orjson.dumps(doc), headers=JS)
    assert r.status_code == 200, r.text
    assert r.headers["content-type"].startswith("application/json")
    assert "rejectedSpans" not in r.text
    r.json()  # a JSON document

    rows = server.sql(
        "SELECT span_id, parent_span_id, kind, status_code, status_message, start_time_unix_nano, "
        "attributes->>'$.big', service_name, json_array_length(links) "
        "FROM spans WHERE trace_id = $t ORDER BY start_time_unix_nano",
        t=tid.hex(),
    )
    assert rows[0] == [root_id.hex(), None, "SERVER", "ERROR", "boom", now - 5_000_000, "9007199254740993",
                       "json-app", None]  # fmt: skip
    assert rows[1][:3] == [child_id.hex(), root_id.hex(), "CLIENT"]
    assert rows[1][8] == 1


def test_otlp_json_snake_case_keys(server: Server) -> None:
    tid, sid = new_trace_id(), new_span_id()
    doc = {
        "resource_spans": [
            {
                "resource": {"attributes": [{"key": "service.name", "value": {"string_value": "snake"}}]},
                "scope_spans": [
                    {
                        "spans": [
                            {
                                "trace_id": tid.hex(),
                                "span_id": sid.hex(),
                                "name": "s",
                                "start_time_unix_nano": "1700000000000000000",
                                "end_time_unix_nano": "1700000000100000000",
                                "attributes": [{"key": "k", "value": {"int_value": "7"}}],
                            }
                        ]
                    }
                ],
            }
        ]
    }
    r = server.http.post(
        "/v1/traces", content=orjson.dumps(doc), headers={"Content-Type": "application/json; charset=utf-8"}
    )
    assert r.status_code == 200, r.text
    assert server.sql(
        "SELECT service_name, attributes->>'$.k', duration_ms FROM spans WHERE trace_id = $t", t=tid.hex()
    ) == [["snake", "7", 100.0]]


def test_json_partial_success_stores_the_valid_spans(server: Server) -> None:
    tid = new_trace_id()
    good = [{"traceId": tid.hex(), "spanId": new_span_id().hex(), "name": f"ok{i}"} for i in range(3)]
    bad = [
        {"traceId": "abcd", "spanId": new_span_id().hex(), "name": "short-trace-id"},
        {"traceId": tid.hex(), "spanId": "00" * 8, "name": "zero-span-id"},
        {"traceId": tid.hex(), "name": "no-span-id"},
    ]
    r = server.http.post("/v1/traces", content=orjson.dumps(json_request(good + bad)), headers=JS)
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["partialSuccess"]["rejectedSpans"] in (3, "3")
    assert "trace_id" in body["partialSuccess"]["errorMessage"]
    assert sorted(x[0] for x in server.sql("SELECT name FROM spans WHERE trace_id = $t", t=tid.hex())) == [
        "ok0", "ok1", "ok2"
    ]  # fmt: skip


def test_protobuf_partial_success_stores_the_valid_spans(server: Server) -> None:
    tid = new_trace_id()
    spans = [span(tid, name="ok1"), span(tid, name="ok2"), span(b"\x01" * 5, name="bad-trace"),
             span(tid, span_id=b"", name="bad-span"),
             span(tid, parent=b"\x01\x02", name="bad-parent")]  # fmt: skip
    r = server.http.post("/v1/traces", content=request(spans).SerializeToString(), headers=PB)
    assert r.status_code == 200
    resp = ExportTraceServiceResponse.FromString(r.content)
    assert resp.partial_success.rejected_spans == 3
    assert resp.partial_success.error_message
    assert count_spans(server, tid.hex()) == 2


# --- permanent errors -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("headers", "body"),
    [
        (PB, b"\xff\xff\xff\xff garbage"),
        (JS, b"{not json"),
        (JS, b"[1, 2, 3]"),
        (JS, b'{"resourceSpans": 5}'),
        (JS, b'{"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "zz"}]}]}]}'),
        ({**PB, "Content-Encoding": "gzip"}, b"definitely not gzip"),
        ({**PB, "Content-Encoding": "gzip"}, gzip.compress(b"\x0a\x05hello")[:-6]),  # truncated
    ],
    ids=["protobuf", "json", "json-array", "json-wrong-type", "json-bad-hex", "bad-gzip", "truncated-gzip"],
)
def test_garbage_is_400(server: Server, headers: dict[str, str], body: bytes) -> None:
    r = server.http.post("/v1/traces", content=body, headers=headers)
    assert r.status_code == 400, (r.status_code, r.content)
    if headers["Content-Type"] == JS["Content-Type"]:
        assert r.json()["code"] == 3
    else:
        assert status_pb2.Status.FromString(r.content).code == 3


@pytest.mark.parametrize(
    "headers",
    [
        {"Content-Type": "text/plain"},
        {"Content-Type": "application/xml"},
        {},
        {**PB, "Content-Encoding": "br"},
    ],
    ids=["text", "xml", "none", "brotli"],
)
def test_unknown_content_type_or_encoding_is_415(server: Server, headers: dict[str, str]) -> None:
    r = server.http.post(
        "/v1/traces", content=request([span(new_trace_id())]).SerializeToString(), headers=headers
    )
    assert r.status_code == 415, (r.status_code, r.content)


@pytest.fixture
def small_server(start_server: StartServer) -> Server:
    return start_server(max_body_bytes=4096, max_decompressed_bytes=65536)


def test_oversized_body_is_413_by_content_length(small_server: Server) -> None:
    r = small_server.http.post("/v1/traces", content=b"\x00" * 5000, headers=PB)
    assert r.status_code == 413


def test_oversized_streamed_body_is_413(small_server: Server) -> None:
    def chunks() -> Iterator[bytes]:  # no Content-Length: chunked transfer encoding
        for _ in range(10):
            yield b"\x00" * 1000

    r = small_server.http.post("/v1/traces", content=chunks(), headers=PB)
    assert r.status_code == 413
    assert "content-length" not in r.request.headers


def test_gzip_bomb_is_413_and_not_inflated(small_server: Server) -> None:
    bomb = gzip.compress(b"\x00" * (2 << 20))  # 2 MiB of zeros, about 2 KB on the wire
    assert len(bomb) < 4096
    r = small_server.http.post("/v1/traces", content=bomb, headers={**PB, "Content-Encoding": "gzip"})
    assert r.status_code == 413, r.content
    # A body just under both limits still goes through.
    tid = new_trace_id()
    ok = gzip.compress(request([span(tid, attrs={"pad": "x" * 30_000})]).SerializeToString())
    r = small_server.http.post("/v1/traces", content=ok, headers={**PB, "Content-Encoding": "gzip"})
    assert r.status_code == 200, r.content
    assert small_server.scalar("SELECT count(*) FROM spans WHERE trace_id = $t", t=tid.hex()) == 1
    assert small_server.http.get("/healthz").status_code == 200


# --- backpressure ----------------------------------------------------------------------------


@pytest.fixture
def tiny_queue_server(start_server: StartServer) -> Server:
    return start_server(max_queue_spans=4)


def block_writer(server: Server) -> threading.Event:
    """Park the writer thread on an event, so whatever is submitted stays queued."""
    release = threading.Event()
    started = threading.Event()

    def job(_con: object) -> None:
        started.set()
        release.wait(60)

    server.runtime.writer.submit_job(job)
    assert started.wait(10)
    return release


def test_full_queue_is_503_with_retry_after_then_accepts(tiny_queue_server: Server) -> None:
    srv = tiny_queue_server
    release = block_writer(srv)
    tid = new_trace_id()
    first: dict[str, int] = {}

    def send_first() -> None:
        with httpx.Client(base_url=srv.url, timeout=30) as c:
            body = request([span(tid, name=f"q{i}") for i in range(3)]).SerializeToString()
            first["status"] = c.post("/v1/traces", content=body, headers=PB).status_code

    t = threading.Thread(target=send_first)
    try:
        t.start()
        wait_equal(
            lambda: srv.runtime.writer.queued_spans, 3, what="the spans queued", timeout=10, every=0.01
        )

        for kind, headers in (("protobuf", PB), ("json", JS)):
            body = request([span(tid, name="x"), span(tid, name="y")]).SerializeToString()
            if kind == "json":
                body = orjson.dumps(json_request([{"traceId": tid.hex(), "spanId": new_span_id().hex()}] * 2))
            r = srv.http.post("/v1/traces", content=body, headers=headers)
            assert r.status_code == 503, (kind, r.status_code, r.content)
            assert int(r.headers["retry-after"]) >= 1
    finally:
        release.set()
        t.join(30)
    assert first["status"] == 200
    assert srv.scalar("SELECT count(*) FROM spans WHERE trace_id = $t", t=tid.hex()) == 3
    r = srv.http.post(
        "/v1/traces", content=request([span(tid, name="later")]).SerializeToString(), headers=PB
    )
    assert r.status_code == 200


def test_sdk_exporter_retries_after_503_until_the_queue_drains(tiny_queue_server: Server) -> None:
    srv = tiny_queue_server
    release = block_writer(srv)
    tid = new_trace_id()

    def occupy() -> None:  # fills the queue: every later request is refused until the writer runs
        with httpx.Client(base_url=srv.url, timeout=30) as c:
            body = request([span(tid, name=f"q{i}") for i in range(4)]).SerializeToString()
            c.post("/v1/traces", content=body, headers=PB)

    def release_after_a_refusal() -> None:
        try:
            wait_until(lambda: srv.runtime.metrics.get("ragfault_ingest_throttled_total"), lambda n: n >= 1,
                       what="a refusal", timeout=20, every=0.01)  # fmt: skip
        finally:
            release.set()

    occupier = threading.Thread(target=occupy)
    releaser = threading.Thread(target=release_after_a_refusal)
    try:
        occupier.start()
        wait_until(lambda: srv.runtime.writer.queued_spans, lambda n: n >= 4, what="the queue to fill",
                   timeout=10, every=0.01)  # fmt: skip
        releaser.start()

        # Real SDK spans, exported by the real exporter (which honours Retry-After and retries).
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

        memory = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(memory))
        with provider.get_tracer("t").start_as_current_span("retried") as s:
            sdk_trace = format(s.get_span_context().trace_id, "032x")
        exporter = OTLPSpanExporter(endpoint=f"{srv.url}/v1/traces", timeout=20)
        result = exporter.export(memory.get_finished_spans())
        exporter.shutdown()
    finally:
        release.set()
        occupier.join(30)
        releaser.join(30)
    assert srv.runtime.metrics.get("ragfault_ingest_throttled_total") >= 1  # it was refused at least once
    assert result == SpanExportResult.SUCCESS
    assert srv.scalar("SELECT count(*) FROM spans WHERE trace_id = $t", t=sdk_trace) == 1


# --- auth ------------------------------------------------------------------------------------


def test_auth_is_off_by_default(server: Server) -> None:
    assert server.settings.ingest_token is None and server.settings.api_token is None
    r = server.http.post(
        "/v1/traces", content=request([span(new_trace_id())]).SerializeToString(), headers=PB
    )
    assert r.status_code == 200


@pytest.mark.server_settings(ingest_token="in-secret", api_token="api-secret")
def test_ingest_token_required_over_http(server: Server) -> None:
    srv = server
    tid = new_trace_id()
    body = request([span(tid)]).SerializeToString()
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": "Basic in-secret"},
                    {"Authorization": "Bearer api-secret"}):  # fmt: skip
        r = srv.http.post("/v1/traces", content=body, headers={**PB, **headers})
        assert r.status_code == 401, headers
        assert status_pb2.Status.FromString(r.content).code == 16  # UNAUTHENTICATED
    r = srv.http.post("/v1/traces", content=orjson.dumps({}), headers={**JS, "Authorization": "Bearer x"})
    assert r.status_code == 401

    exporter_ok = srv.http.post(
        "/v1/traces", content=body, headers={**PB, "Authorization": "Bearer in-secret"}
    )
    assert exporter_ok.status_code == 200

    # The real exporter with the header configured.
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    p = TracerProvider()
    p.add_span_processor(
        SimpleSpanProcessor(
            OTLPSpanExporter(endpoint=f"{srv.url}/v1/traces", headers={"authorization": "Bearer in-secret"})
        )
    )
    with p.get_tracer("t").start_as_current_span("with-token") as s:
        sdk_trace = format(s.get_span_context().trace_id, "032x")
    p.shutdown()

    api = {"Authorization": "Bearer api-secret"}
    q = {
        "sql": "SELECT count(*) FROM spans WHERE trace_id IN ($a, $b)",
        "params": {"a": tid.hex(), "b": sdk_trace},
    }
    assert srv.http.post("/api/v1/sql", json=q).status_code == 401
    assert (
        srv.http.post("/api/v1/sql", json=q, headers={"Authorization": "Bearer in-secret"}).status_code == 401
    )
    r = srv.http.post("/api/v1/sql", json=q, headers=api)
    assert r.status_code == 200, r.text
    assert r.json()["rows"] == [[2]]
    assert srv.http.get("/healthz").status_code == 200  # health stays open for probes
