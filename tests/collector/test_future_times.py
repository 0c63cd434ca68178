"""Time a client cannot fake: data dated past ``future_grace_seconds`` is stored with the time it was
received in its TIMESTAMP columns (the ``*_unix_nano`` columns keep what was sent), ``partial_success``
says so, and ``/metrics`` counts it, on both transports and all three signals."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import grpc
import pytest
from opentelemetry.proto.collector.logs.v1 import logs_service_pb2, logs_service_pb2_grpc
from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc

from tests.collector.otlp_build import kv, new_trace_id, request, span
from tests.conftest import Server, StartServer

PB = {"Content-Type": "application/x-protobuf"}
YEAR_2200 = int(datetime(2200, 1, 1, tzinfo=UTC).timestamp() * 1e9)


@pytest.fixture(scope="module")
def srv(start_module_server: StartServer) -> Server:
    return start_module_server(future_grace_seconds=600)


def _recent(value: str | None) -> bool:
    """A stored TIMESTAMP (ISO text through the SQL API) within a few minutes of now."""
    assert value is not None
    t = datetime.fromisoformat(str(value)).replace(tzinfo=UTC)
    return abs(t - datetime.now(UTC)) < timedelta(minutes=5)


def test_a_span_from_the_future_is_stored_at_its_receive_time(srv: Server) -> None:
    tid = new_trace_id()
    future = span(tid, name="from-2200")
    future.start_time_unix_nano, future.end_time_unix_nano = YEAR_2200, YEAR_2200 + 5_000_000
    honest = span(tid, name="honest")
    r = srv.http.post("/v1/traces", content=request([future, honest]).SerializeToString(), headers=PB)
    assert r.status_code == 200
    resp = trace_service_pb2.ExportTraceServiceResponse.FromString(r.content)
    assert resp.partial_success.rejected_spans == 0
    assert "1 spans dated more than 600 s in the future" in resp.partial_success.error_message
    rows = srv.sql(
        "SELECT name, start_time, end_time, start_time_unix_nano, duration_ms FROM spans "
        "WHERE trace_id = $t ORDER BY name",
        t=tid.hex(),
    )
    (name, start, end, raw_start, duration), honest_row = rows
    assert name == "from-2200"
    assert _recent(start) and _recent(end)
    assert int(raw_start) == YEAR_2200  # what was sent is kept
    assert duration == pytest.approx(5.0)
    assert honest_row[0] == "honest" and _recent(honest_row[1])
    assert (
        srv.scalar(
            "SELECT count(*) FROM traces WHERE trace_id = $t AND end_time > now() + INTERVAL 1 DAY",
            t=tid.hex(),
        )
        == 0
    )
    assert srv.runtime.metrics.get("ragfault_future_timestamps_clamped_total", signal="traces") >= 1


def test_log_records_and_points_from_the_future_over_grpc(srv: Server) -> None:
    logs = logs_service_pb2.ExportLogsServiceRequest()
    rl = logs.resource_logs.add()
    rl.resource.attributes.append(kv("service.name", "future-logs"))
    rec = rl.scope_logs.add().log_records.add()
    rec.time_unix_nano = YEAR_2200
    rec.body.string_value = "from 2200"
    with grpc.insecure_channel(srv.grpc_endpoint) as channel:
        resp = logs_service_pb2_grpc.LogsServiceStub(channel).Export(logs, timeout=30)
        assert resp.partial_success.rejected_log_records == 0
        assert "1 log records dated more than 600 s in the future" in resp.partial_success.error_message
        # a trace over gRPC too
        tid = new_trace_id()
        s = span(tid, name="grpc-2200")
        s.start_time_unix_nano = s.end_time_unix_nano = YEAR_2200
        out = trace_service_pb2_grpc.TraceServiceStub(channel).Export(request([s]), timeout=30)
        assert "in the future" in out.partial_success.error_message
    time_value, raw = srv.sql("SELECT time, time_unix_nano FROM log_records WHERE body_text = 'from 2200'")[0]
    assert _recent(time_value) and int(raw) == YEAR_2200
    assert _recent(srv.scalar("SELECT start_time FROM spans WHERE name = 'grpc-2200'"))

    points = metrics_service_pb2.ExportMetricsServiceRequest()
    rm = points.resource_metrics.add()
    rm.resource.attributes.append(kv("service.name", "future-points"))
    m = rm.scope_metrics.add().metrics.add()
    m.name = "future.gauge"
    p = m.gauge.data_points.add()
    p.as_double, p.start_time_unix_nano, p.time_unix_nano = 1.5, YEAR_2200, YEAR_2200
    r = srv.http.post("/v1/metrics", content=points.SerializeToString(), headers=PB)
    assert r.status_code == 200
    resp2 = metrics_service_pb2.ExportMetricsServiceResponse.FromString(r.content)
    assert "1 data points dated more than 600 s in the future" in resp2.partial_success.error_message
    start, at, raw_at = srv.sql(
        "SELECT start_time, time, time_unix_nano FROM metric_points WHERE name = 'future.gauge'"
    )[0]
    assert _recent(start) and _recent(at) and int(raw_at) == YEAR_2200
    assert srv.runtime.metrics.get("ragfault_future_timestamps_clamped_total", signal="logs") == 1
    assert srv.runtime.metrics.get("ragfault_future_timestamps_clamped_total", signal="metrics") == 1


def test_no_grace_stores_times_as_sent(start_server: StartServer) -> None:
    s = start_server(future_grace_seconds=None)
    sp = span(new_trace_id(), name="as-sent")
    sp.start_time_unix_nano = sp.end_time_unix_nano = YEAR_2200
    r = s.http.post("/v1/traces", content=request([sp]).SerializeToString(), headers=PB)
    resp = trace_service_pb2.ExportTraceServiceResponse.FromString(r.content)
    assert resp.partial_success.error_message == ""
    assert str(s.scalar("SELECT start_time FROM spans WHERE name = 'as-sent'")).startswith("2200-01-01")
