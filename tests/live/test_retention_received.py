"""Retention goes by the time ragfault received the data, not by the time a client wrote on it: data
dated in the future neither outlives max_age_days nor pushes out traces received after it. Real
exporters (traces, logs, metrics) over HTTP, a real server."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

from opentelemetry._logs import LogRecord
from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import SimpleLogRecordProcessor
from opentelemetry.sdk.metrics.export import (
    Gauge,
    Metric,
    MetricExportResult,
    MetricsData,
    NumberDataPoint,
    ResourceMetrics,
    ScopeMetrics,
)
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.util.instrumentation import InstrumentationScope

from collector.maintenance.retention import RetentionService, utcnow
from tests.live.conftest import DOCS, GOLD
from tests.tracegen import rag_trace

YEAR_2200 = int(datetime(2200, 1, 1, tzinfo=UTC).timestamp() * 1e9)
YEAR_2000 = int(datetime(2000, 1, 1, tzinfo=UTC).timestamp() * 1e9)


def dated_trace(srv, service: str, start_ns: int) -> str:
    """A trace whose spans say they ran at ``start_ns`` (a client's clock, wrong or forged)."""
    tracer = srv.tracer(service)
    root = tracer.start_span("rag.request", start_time=start_ns, attributes={"input.value": GOLD["query"]})
    root.end(end_time=start_ns + 2_000_000)
    return format(root.get_span_context().trace_id, "032x")


def real_traces(srv, service: str, n: int) -> list[str]:
    return [
        rag_trace(srv.tracer(service), query=GOLD["query"], answer="30 days", candidates=DOCS)
        for _ in range(n)
    ]


def stored(srv, ids: list[str]) -> set[str]:
    return {
        r[0] for r in srv.sql("SELECT trace_id FROM traces WHERE trace_id IN (SELECT unnest($ids))", ids=ids)
    }


def test_traces_dated_ahead_do_not_push_out_traces_received_after_them(live) -> None:
    srv = live(
        "[sampling]\nproduction_rate = 0.0\n[retention]\n[retention.services.victim]\nmax_traces = 5\n"
    )
    # five minutes ahead: within any grace a server gives a client's clock, so stored as sent
    ahead = time.time_ns() + 5 * 60 * 10**9
    forged = [dated_trace(srv, "victim", ahead + i) for i in range(5)]
    srv.drain()
    real = real_traces(srv, "victim", 5)  # received after the forged ones: the newest five
    srv.drain()
    assert stored(srv, forged + real) == set(forged + real)

    deleted = srv.runtime.find(RetentionService).run_once()
    assert deleted["traces"] == 5
    assert stored(srv, forged + real) == set(real)


def test_data_dated_far_ahead_does_not_outlive_max_age(live) -> None:
    srv = live("[sampling]\nproduction_rate = 0.0\n[retention]\nmax_age_days = 1\n")
    forged = [dated_trace(srv, "svc", YEAR_2200 + i) for i in range(3)]
    real = real_traces(srv, "svc", 2)
    srv.drain()
    send_logs(srv, "svc", [YEAR_2200, YEAR_2000, time.time_ns()])
    send_points(srv, "svc", [YEAR_2200, YEAR_2000, time.time_ns()])
    assert stored(srv, forged + real) == set(forged + real)
    signals = "SELECT (SELECT count(*) FROM log_records WHERE service_name = 'svc'), (SELECT count(*) FROM metric_points WHERE service_name = 'svc')"
    assert srv.sql(signals)[0] == [3, 3]

    # now: everything was received just now, whatever it says: nothing goes (a record dated 2000
    # was deleted at once by its own date before)
    assert srv.runtime.find(RetentionService).run_once().get("traces", 0) == 0
    assert stored(srv, forged + real) == set(forged + real)
    assert srv.sql(signals)[0] == [3, 3]

    # two days on, all of it is older than a day: the data dated 2200 goes too
    later = srv.runtime.find(RetentionService).run_once(now=utcnow() + timedelta(days=2))
    assert later["traces"] == 5
    assert stored(srv, forged + real) == set()
    assert srv.sql(signals)[0] == [0, 0]


def send_logs(srv, service: str, times_ns: list[int]) -> None:
    """Log records of no trace, dated ``times_ns``, through the SDK's OTLP/HTTP exporter."""
    provider = LoggerProvider(resource=Resource.create({"service.name": service}))
    provider.add_log_record_processor(
        SimpleLogRecordProcessor(OTLPLogExporter(endpoint=f"{srv.url}/v1/logs"))
    )
    logger = provider.get_logger("tests.retention")
    for i, t in enumerate(times_ns):
        logger.emit(LogRecord(timestamp=t, observed_timestamp=t, body=f"record {i}"))
    provider.shutdown()


def send_points(srv, service: str, times_ns: list[int]) -> None:
    """Gauge points dated ``times_ns`` (one series each), through the SDK's OTLP/HTTP exporter."""
    points = [
        NumberDataPoint(attributes={"i": i}, start_time_unix_nano=t, time_unix_nano=t, value=float(i))
        for i, t in enumerate(times_ns)
    ]
    data = MetricsData([
        ResourceMetrics(
            Resource.create({"service.name": service}),
            [ScopeMetrics(InstrumentationScope("tests.retention"), [Metric("queue.depth", None, "1", Gauge(points))], "")],
            "",
        )
    ])  # fmt: skip
    exporter = OTLPMetricExporter(endpoint=f"{srv.url}/v1/metrics")
    try:
        assert exporter.export(data) is MetricExportResult.SUCCESS
    finally:
        exporter.shutdown()
