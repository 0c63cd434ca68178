"""OTLP logs and metrics: the real SDK exporters over HTTP and gRPC, OTLP/JSON, partial success,
malformed and oversized payloads, auth, re-sent records and durability (acknowledged after commit)."""

from __future__ import annotations

import gzip
import signal
import threading
import zlib
from pathlib import Path

import grpc
import httpx
import orjson
import pytest
from google.rpc import status_pb2
from opentelemetry._logs import LogRecord, SeverityNumber
from opentelemetry.exporter.otlp.proto.grpc._log_exporter import OTLPLogExporter as GrpcLogExporter
from opentelemetry.exporter.otlp.proto.grpc.metric_exporter import OTLPMetricExporter as GrpcMetricExporter
from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter as HttpLogExporter
from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter as HttpMetricExporter
from opentelemetry.metrics import Observation
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (
    ExportLogsServiceRequest,
    ExportLogsServiceResponse,
)
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
)
from opentelemetry.proto.logs.v1.logs_pb2 import LogRecord as PbLogRecord
from opentelemetry.proto.metrics.v1.metrics_pb2 import Metric
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import SimpleLogRecordProcessor
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider

from tests.collector.otlp_build import kv, new_span_id, new_trace_id, raw_export
from tests.collector.test_durability import ServeProcess
from tests.conftest import Server, StartServer

PB = {"Content-Type": "application/x-protobuf"}
JS = {"Content-Type": "application/json"}
LOGS_METHOD = "/opentelemetry.proto.collector.logs.v1.LogsService/Export"
METRICS_METHOD = "/opentelemetry.proto.collector.metrics.v1.MetricsService/Export"


@pytest.fixture(scope="module")
def srv(start_module_server: StartServer) -> Server:
    return start_module_server()


def log_provider(exporter: object, service: str) -> LoggerProvider:
    provider = LoggerProvider(resource=Resource.create({"service.name": service}))
    provider.add_log_record_processor(SimpleLogRecordProcessor(exporter))  # type: ignore[arg-type]
    return provider


def metric_provider(exporter: object, service: str) -> MeterProvider:
    # a reader that exports when the provider shuts down: no timer in the test
    reader = PeriodicExportingMetricReader(exporter, export_interval_millis=10**9)  # type: ignore[arg-type]
    return MeterProvider(metric_readers=[reader], resource=Resource.create({"service.name": service}))


def logs_request(records: list[PbLogRecord], service: str = "raw-logs") -> ExportLogsServiceRequest:
    req = ExportLogsServiceRequest()
    rl = req.resource_logs.add()
    rl.resource.attributes.append(kv("service.name", service))
    sl = rl.scope_logs.add()
    sl.scope.name = "raw"
    sl.log_records.extend(records)
    return req


# --- logs ------------------------------------------------------------------------------------


@pytest.mark.parametrize("transport", ["http", "http-gzip", "grpc"])
def test_sdk_log_exporter_records_are_stored_losslessly_and_joined_to_their_span(
    srv: Server, transport: str
) -> None:
    service = f"logs-{transport}"
    if transport == "grpc":
        exporter: object = GrpcLogExporter(endpoint=srv.grpc_endpoint, insecure=True)
    else:
        gz = Compression.Gzip if transport == "http-gzip" else Compression.NoCompression
        exporter = HttpLogExporter(endpoint=f"{srv.url}/v1/logs", compression=gz)
    provider = log_provider(exporter, service)
    logger = provider.get_logger("tests.logs", "1.2")
    tracer = TracerProvider().get_tracer("tests")
    with tracer.start_as_current_span("call") as span:
        ctx = span.get_span_context()
        logger.emit(
            LogRecord(
                event_name="gen_ai.user.message",
                body={"content": "年度会员还能退款吗？", "n": [1, 2]},
                attributes={"gen_ai.system": "openai", "k": 3},
                severity_number=SeverityNumber.INFO,
                severity_text="INFO",
                timestamp=1_700_000_000_123_456_789,
            )
        )
    logger.emit(LogRecord(body="plain text line", severity_number=SeverityNumber.WARN))
    provider.shutdown()  # the exporter got its answers: both records are committed

    rows = srv.sql(
        "SELECT trace_id, span_id, event_name, body, body_text, attributes, severity_number, severity_text, "
        "time_unix_nano, time, scope_name, scope_version, resource_attributes->>'$.\"service.name\"' "
        "FROM log_records WHERE service_name = $s ORDER BY event_name NULLS LAST",
        s=service,
    )
    assert len(rows) == 2
    event, plain = rows
    assert event[0] == format(ctx.trace_id, "032x") and event[1] == format(ctx.span_id, "016x")
    assert event[2] == "gen_ai.user.message"
    assert orjson.loads(event[3]) == {"content": "年度会员还能退款吗？", "n": [1, 2]}
    assert event[4] is None  # a structured body has no text form
    assert orjson.loads(event[5]) == {"gen_ai.system": "openai", "k": 3}
    assert event[6:9] == [9, "INFO", 1_700_000_000_123_456_789]
    assert event[9] == "2023-11-14T22:13:20.123457"  # rounded to the microsecond, as span times are
    assert event[10:] == ["tests.logs", "1.2", service]
    assert plain[0] is None and plain[1] is None and plain[2] is None  # no span: no ids
    assert plain[3] == '"plain text line"' and plain[4] == "plain text line"
    assert plain[6] == 13  # WARN


def test_otlp_json_logs_with_hex_ids_and_deflate(srv: Server) -> None:
    tid, sid = new_trace_id().hex(), new_span_id().hex()
    doc = {
        "resourceLogs": [{
            "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "json-logs"}}]},
            "scopeLogs": [{"scope": {"name": "js"}, "logRecords": [{
                "timeUnixNano": "1700000000000000001", "severityNumber": "SEVERITY_NUMBER_ERROR",
                "traceId": tid.upper(), "spanId": sid, "eventName": "gen_ai.choice",
                "body": {"kvlistValue": {"values": [{"key": "index", "value": {"intValue": "0"}}]}},
                "attributes": [{"key": "x", "value": {"boolValue": True}}],
            }]}],
        }]
    }  # fmt: skip
    r = srv.http.post(
        "/v1/logs", content=zlib.compress(orjson.dumps(doc)), headers={**JS, "Content-Encoding": "deflate"}
    )
    assert r.status_code == 200, r.text
    assert r.headers["content-type"].startswith("application/json")
    assert r.json() == {}
    row = srv.sql(
        "SELECT trace_id, span_id, severity_number, event_name, body, attributes, time_unix_nano "
        "FROM log_records WHERE service_name = 'json-logs'"
    )
    assert row == [[tid, sid, 17, "gen_ai.choice", '{"index":0}', '{"x":true}', 1700000000000000001]]


def test_log_partial_success_keeps_the_valid_records(srv: Server) -> None:
    good = PbLogRecord(time_unix_nano=5, trace_id=new_trace_id(), span_id=new_span_id())
    good.body.string_value = "kept"
    bad = PbLogRecord(time_unix_nano=6, trace_id=b"\x01" * 5)  # a 5-byte trace id
    body = logs_request([good, bad], service="partial-logs").SerializeToString()
    r = srv.http.post("/v1/logs", content=body, headers=PB)
    assert r.status_code == 200
    resp = ExportLogsServiceResponse.FromString(r.content)
    assert resp.partial_success.rejected_log_records == 1
    assert "trace_id" in resp.partial_success.error_message
    assert srv.sql("SELECT body_text FROM log_records WHERE service_name = 'partial-logs'") == [["kept"]]

    # the same over gRPC
    with grpc.insecure_channel(srv.grpc_endpoint) as channel:
        export = channel.unary_unary(
            LOGS_METHOD,
            request_serializer=lambda b: b,
            response_deserializer=ExportLogsServiceResponse.FromString,
        )
        resp = export(body, timeout=10)
    assert resp.partial_success.rejected_log_records == 1


def test_resent_log_records_are_stored_once(srv: Server) -> None:
    recs = []
    for i in range(3):
        rec = PbLogRecord(time_unix_nano=1_000 + i)
        rec.body.string_value = "same text"  # same text, different times: three records
        recs.append(rec)
    twin = PbLogRecord(time_unix_nano=1_000)
    twin.body.string_value = "same text"
    twin.attributes.append(kv("differs", 1))  # same time and text, another attribute: a record of its own
    body = logs_request([*recs, twin], service="resent-logs").SerializeToString()
    before = srv.runtime.metrics.get("ragfault_log_records_duplicate_total")
    for _ in range(3):
        assert srv.http.post("/v1/logs", content=body, headers=PB).status_code == 200
    assert srv.scalar("SELECT count(*) FROM log_records WHERE service_name = 'resent-logs'") == 4
    assert srv.runtime.metrics.get("ragfault_log_records_duplicate_total") - before == 8


# --- metrics ---------------------------------------------------------------------------------


@pytest.mark.parametrize("transport", ["http", "grpc"])
def test_sdk_metric_exporter_points_are_queryable(srv: Server, transport: str) -> None:
    service = f"metrics-{transport}"
    if transport == "grpc":
        exporter: object = GrpcMetricExporter(endpoint=srv.grpc_endpoint, insecure=True)
    else:
        exporter = HttpMetricExporter(endpoint=f"{srv.url}/v1/metrics", compression=Compression.Gzip)
    provider = metric_provider(exporter, service)
    meter = provider.get_meter("tests.metrics")
    usage = meter.create_histogram("gen_ai.client.token.usage", unit="{token}", description="tokens used")
    duration = meter.create_histogram("gen_ai.client.operation.duration", unit="s")
    common = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "m1"}
    for n in (10, 30):
        usage.record(n, {**common, "gen_ai.token.type": "input"})
    usage.record(7, {**common, "gen_ai.token.type": "output"})
    duration.record(0.25, common)
    meter.create_counter("requests").add(3, {"route": "/ask"})
    meter.create_up_down_counter("inflight").add(-2)
    meter.create_observable_gauge("queue", callbacks=[lambda _o: [Observation(4.5)]])
    provider.shutdown()  # one collection, exported and acknowledged (after commit)

    tokens = srv.sql(
        "SELECT attributes->>'$.\"gen_ai.token.type\"' AS t, kind, unit, temporality, count, sum, min, max, "
        "list_sum(bucket_counts), len(bucket_counts) = len(explicit_bounds) + 1, description "
        "FROM metric_points WHERE service_name = $s AND name = 'gen_ai.client.token.usage' ORDER BY t",
        s=service,
    )
    assert tokens == [
        ["input", "histogram", "{token}", "cumulative", 2, 40.0, 10.0, 30.0, 2, True, "tokens used"],
        ["output", "histogram", "{token}", "cumulative", 1, 7.0, 7.0, 7.0, 1, True, "tokens used"],
    ]
    assert srv.sql(
        "SELECT sum, count, unit FROM metric_points WHERE service_name = $s AND name = 'gen_ai.client.operation.duration'",
        s=service,
    ) == [[0.25, 1, "s"]]
    others = srv.sql(
        "SELECT name, kind, value, is_monotonic, temporality, attributes FROM metric_points "
        "WHERE service_name = $s AND name NOT LIKE 'gen_ai.%' ORDER BY name",
        s=service,
    )
    assert others == [
        ["inflight", "sum", -2.0, False, "cumulative", "{}"],
        ["queue", "gauge", 4.5, None, None, "{}"],
        ["requests", "sum", 3.0, True, "cumulative", '{"route":"/ask"}'],
    ]


def test_otlp_json_metrics_exponential_histogram_summary_and_partial_success(srv: Server) -> None:
    doc = {
        "resourceMetrics": [{
            "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "json-metrics"}}]},
            "scopeMetrics": [{"scope": {"name": "js"}, "metrics": [
                {"name": "latency", "unit": "ms", "exponentialHistogram": {
                    "aggregationTemporality": 1,
                    "dataPoints": [{"timeUnixNano": "2000", "count": "3", "sum": 9.5, "scale": 2,
                                    "zeroCount": "1", "positive": {"offset": -1, "bucketCounts": ["1", "1"]},
                                    "exemplars": [{"asDouble": 4.0, "traceId": "ab" * 16, "spanId": "cd" * 8}]}]}},
                {"name": "rpc", "summary": {"dataPoints": [{"timeUnixNano": "2000", "count": "4", "sum": 10.0,
                    "quantileValues": [{"quantile": 0.5, "value": 2.0}, {"quantile": 1.0, "value": 5.0}]}]}},
                {"name": "", "gauge": {"dataPoints": [{"asInt": "1"}, {"asInt": "2"}]}},
            ]}],
        }]
    }  # fmt: skip
    r = srv.http.post(
        "/v1/metrics", content=gzip.compress(orjson.dumps(doc)), headers={**JS, "Content-Encoding": "gzip"}
    )
    assert r.status_code == 200, r.text
    assert r.json()["partialSuccess"]["rejectedDataPoints"] == "2"
    rows = srv.sql(
        "SELECT name, kind, temporality, count, sum, exp_histogram, quantiles, exemplars FROM metric_points "
        "WHERE service_name = 'json-metrics' ORDER BY name"
    )
    assert [r[:5] for r in rows] == [
        ["latency", "exp_histogram", "delta", 3, 9.5],
        ["rpc", "summary", None, 4, 10.0],
    ]
    exp = orjson.loads(rows[0][5])
    assert (
        exp["scale"] == 2
        and exp["zero_count"] == 1
        and exp["positive"] == {"offset": -1, "bucket_counts": [1, 1]}
    )
    assert orjson.loads(rows[0][7])[0]["trace_id"] == "ab" * 16
    assert orjson.loads(rows[1][6]) == [{"quantile": 0.5, "value": 2.0}, {"quantile": 1.0, "value": 5.0}]


def test_resent_metric_points_are_stored_once(srv: Server) -> None:
    req = ExportMetricsServiceRequest()
    rm = req.resource_metrics.add()
    rm.resource.attributes.append(kv("service.name", "resent-metrics"))
    m: Metric = rm.scope_metrics.add().metrics.add(name="hits")
    for t in (10, 20):
        p = m.sum.data_points.add(time_unix_nano=t, as_int=t)
        p.attributes.append(kv("a", "b"))
    body = req.SerializeToString()
    for _ in range(2):
        assert srv.http.post("/v1/metrics", content=body, headers=PB).status_code == 200
    assert srv.sql(
        "SELECT value FROM metric_points WHERE service_name = 'resent-metrics' ORDER BY time_unix_nano"
    ) == [
        [10.0],
        [20.0],
    ]


# --- malformed, oversized, unauthorized ------------------------------------------------------


@pytest.mark.parametrize("path", ["/v1/logs", "/v1/metrics"])
@pytest.mark.parametrize(
    ("headers", "body"),
    [
        (PB, b"\xff\xff\xff\xff garbage"),
        (JS, b"{not json"),
        (JS, b"[1, 2]"),
        # each path reads its own field of these (the other is an unknown field, ignored)
        (
            JS,
            b'{"resourceLogs": [{"scopeLogs": [{"logRecords": [{"traceId": "zz"}]}]}], "resourceMetrics": '
            b'[{"scopeMetrics": [{"metrics": [{"gauge": {"dataPoints": [{"exemplars": [{"traceId": "zz"}]}]}}]}]}]}',
        ),
        (JS, b'{"resourceLogs": [{"scopeLogs": 5}], "resourceMetrics": [{"scopeMetrics": 5}]}'),
        ({**PB, "Content-Encoding": "gzip"}, b"not gzip"),
    ],
    ids=["protobuf", "json", "json-array", "bad-hex", "wrong-type", "bad-gzip"],
)
def test_malformed_payload_is_400(srv: Server, path: str, headers: dict[str, str], body: bytes) -> None:
    r = srv.http.post(path, content=body, headers=headers)
    assert r.status_code == 400, r.text
    if headers["Content-Type"] == PB["Content-Type"]:
        assert status_pb2.Status.FromString(r.content).code == 3  # INVALID_ARGUMENT
    else:
        assert r.json()["code"] == 3


def test_unknown_content_type_is_415(srv: Server) -> None:
    for path in ("/v1/logs", "/v1/metrics"):
        assert srv.http.post(path, content=b"x", headers={"Content-Type": "text/plain"}).status_code == 415


@pytest.mark.parametrize("method", [LOGS_METHOD, METRICS_METHOD])
def test_grpc_garbage_is_invalid_argument(srv: Server, method: str) -> None:
    with grpc.insecure_channel(srv.grpc_endpoint) as channel:
        raw = raw_export(channel, method)
        with pytest.raises(grpc.RpcError) as info:
            raw(b"\xff\xff\xff\xff garbage", timeout=10)
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert srv.http.get("/healthz").status_code == 200


def test_oversized_logs_and_metrics_are_413(start_server: StartServer) -> None:
    s = start_server(max_body_bytes=4096, max_decompressed_bytes=65536)
    for path in ("/v1/logs", "/v1/metrics"):
        assert s.http.post(path, content=b"\x00" * 5000, headers=PB).status_code == 413
        bomb = gzip.compress(b"\x00" * 200_000)  # small on the wire, over the inflated limit
        r = s.http.post(path, content=bomb, headers={**PB, "Content-Encoding": "gzip"})
        assert r.status_code == 413
    assert s.scalar("SELECT (SELECT count(*) FROM log_records) + (SELECT count(*) FROM metric_points)") == 0


def test_ingest_token_guards_logs_and_metrics(start_server: StartServer) -> None:
    s = start_server(ingest_token="in-secret")
    rec = PbLogRecord(time_unix_nano=1)
    rec.body.string_value = "guarded"
    body = logs_request([rec], service="guarded").SerializeToString()
    for path, payload in (
        ("/v1/logs", body),
        ("/v1/metrics", ExportMetricsServiceRequest().SerializeToString()),
    ):
        r = s.http.post(path, content=payload, headers={**PB, "Authorization": "Bearer wrong"})
        assert r.status_code == 401
        assert status_pb2.Status.FromString(r.content).code == 16
    with grpc.insecure_channel(s.grpc_endpoint) as channel:
        for method in (LOGS_METHOD, METRICS_METHOD):
            raw = raw_export(channel, method)
            with pytest.raises(grpc.RpcError) as info:
                raw(body, timeout=10)
            assert info.value.code() == grpc.StatusCode.UNAUTHENTICATED
    assert s.scalar("SELECT count(*) FROM log_records") == 0

    # the real exporters with the header configured
    auth = {"authorization": "Bearer in-secret"}
    provider = log_provider(HttpLogExporter(endpoint=f"{s.url}/v1/logs", headers=auth), "guarded-http")
    provider.get_logger("t").emit(LogRecord(body="over http"))
    provider.shutdown()
    provider = log_provider(
        GrpcLogExporter(endpoint=s.grpc_endpoint, insecure=True, headers=auth), "guarded-grpc"
    )
    provider.get_logger("t").emit(LogRecord(body="over grpc"))
    provider.shutdown()
    mp = metric_provider(HttpMetricExporter(endpoint=f"{s.url}/v1/metrics", headers=auth), "guarded")
    mp.get_meter("t").create_counter("c").add(1)
    mp.shutdown()
    assert s.sql("SELECT body_text FROM log_records ORDER BY body_text") == [["over grpc"], ["over http"]]
    assert s.scalar("SELECT count(*) FROM metric_points WHERE name = 'c'") == 1


# --- durability ------------------------------------------------------------------------------


def test_sigkill_after_acks_loses_no_log_record_or_data_point(tmp_path: Path) -> None:
    db = tmp_path / "signals.duckdb"
    first = ServeProcess(db, tmp_path / "serve1.log")
    acked: list[tuple[str, bytes, str]] = []  # (path, body, the record's or point's text)
    lock = threading.Lock()
    stop = threading.Event()
    target = 60

    def sender(worker: int, path: str) -> None:
        i = 0
        with httpx.Client(base_url=first.url, timeout=30) as client:
            while not stop.is_set():
                i += 1
                key = f"{path}-{worker}-{i}"
                if path == "/v1/logs":
                    rec = PbLogRecord(time_unix_nano=i, trace_id=new_trace_id(), span_id=new_span_id())
                    rec.body.string_value = key
                    body = logs_request([rec], service="durable").SerializeToString()
                else:
                    req = ExportMetricsServiceRequest()
                    rm = req.resource_metrics.add()
                    m = rm.scope_metrics.add().metrics.add(name=key)
                    m.gauge.data_points.add(time_unix_nano=i, as_double=float(i))
                    body = req.SerializeToString()
                try:
                    r = client.post(path, content=body, headers=PB)
                except httpx.TransportError:
                    return
                if r.status_code == 200:
                    with lock:
                        acked.append((path, body, key))
                        if len(acked) >= target:
                            stop.set()

    threads = [
        threading.Thread(target=sender, args=(w, p)) for w in range(2) for p in ("/v1/logs", "/v1/metrics")
    ]
    try:
        for t in threads:
            t.start()
        assert stop.wait(120), f"only {len(acked)} requests were acknowledged"
        first.proc.send_signal(signal.SIGKILL)
    finally:
        stop.set()
        first.kill()
        for t in threads:
            t.join(30)

    second = ServeProcess(db, tmp_path / "serve2.log")
    try:
        logs = {r[0] for r in second.sql("SELECT body_text FROM log_records")}
        points = {r[0] for r in second.sql("SELECT name FROM metric_points")}
        expected_logs = {k for p, _, k in acked if p == "/v1/logs"}
        expected_points = {k for p, _, k in acked if p == "/v1/metrics"}
        assert expected_logs and expected_points
        assert expected_logs <= logs, f"lost {sorted(expected_logs - logs)[:3]}"
        assert expected_points <= points, f"lost {sorted(expected_points - points)[:3]}"
        before = second.sql("SELECT (SELECT count(*) FROM log_records), (SELECT count(*) FROM metric_points)")
        for path, body, _ in acked[:20]:  # re-sent after the restart: nothing new
            assert second.http.post(path, content=body, headers=PB).status_code == 200
        after = second.sql("SELECT (SELECT count(*) FROM log_records), (SELECT count(*) FROM metric_points)")
        assert after == before
    finally:
        second.kill()
