"""What a request carries once and each row copies is counted before any row is built.

A 12 KB gzip body can name a 1 MB resource attribute (or a 1 MB metric description) for thousands of
records: built as rows, each copies it. Such a request is refused with 413 / INVALID_ARGUMENT on
both transports and all three signals, and the server's process tree (decode workers included)
grows by little while it decides; a request of a million small log records or data points, whose
rows fit ``max_decoded_bytes``, is stored whole within the bound the README states.
"""

from __future__ import annotations

import gzip
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import httpx
import pytest
from google.protobuf.message import Message
from opentelemetry.proto.collector.logs.v1 import logs_service_pb2, logs_service_pb2_grpc
from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2, metrics_service_pb2_grpc
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc
from opentelemetry.proto.common.v1.common_pb2 import KeyValue

from tests.collector.otlp_build import new_trace_id, span
from tests.served import Collector

MB = 1 << 20
# the server's settings here: the README's ingest bound is stated in these
INFLIGHT = 256 * MB
DECOMPRESSED = 32 * MB
WORKERS = 1
# the bound docs/limits.md states for what ingest adds to the server's process tree: three times the
# budget in the server (batches held, DuckDB's copy of a slice it inserts), and in each decode
# worker 0.1 GB, four times the largest inflated body (the parsed message) and 2.5 times a request's
# rows (their Arrow and the allocator's slack)
BOUND = 3 * INFLIGHT + WORKERS * (100 * MB + 4 * DECOMPRESSED + 5 * INFLIGHT // 2)
# what an amplified request may add while it is refused: it is never built
REFUSED_BOUND = 64 * MB

PB = {"Content-Type": "application/x-protobuf", "Content-Encoding": "gzip"}


def _kv(key: str, value: str) -> KeyValue:
    kv = KeyValue(key=key)
    kv.value.string_value = value
    return kv


def logs_request(records: int, resource_bytes: int = 0) -> logs_service_pb2.ExportLogsServiceRequest:
    req = logs_service_pb2.ExportLogsServiceRequest()
    rl = req.resource_logs.add()
    rl.resource.attributes.append(_kv("service.name", "amp"))
    if resource_bytes:
        rl.resource.attributes.append(_kv("big", "r" * resource_bytes))
    sl = rl.scope_logs.add()
    for i in range(records):
        rec = sl.log_records.add()
        rec.time_unix_nano = 1_700_000_000_000_000_000 + i
    return req


def metrics_request(
    points: int, description_bytes: int = 0
) -> metrics_service_pb2.ExportMetricsServiceRequest:
    req = metrics_service_pb2.ExportMetricsServiceRequest()
    rm = req.resource_metrics.add()
    rm.resource.attributes.append(_kv("service.name", "amp"))
    m = rm.scope_metrics.add().metrics.add()
    m.name = "amp.points"
    m.description = "d" * description_bytes
    for i in range(points):
        p = m.gauge.data_points.add()
        p.as_int = i
        p.time_unix_nano = 1_700_000_000_000_000_000 + i
    return req


def traces_request(spans: int, resource_bytes: int) -> trace_service_pb2.ExportTraceServiceRequest:
    req = trace_service_pb2.ExportTraceServiceRequest()
    rs = req.resource_spans.add()
    rs.resource.attributes.append(_kv("service.name", "amp"))
    rs.resource.attributes.append(_kv("big", "r" * resource_bytes))
    ss = rs.scope_spans.add()
    tid = new_trace_id()
    ss.spans.extend(span(tid, name=f"s{i}") for i in range(spans))
    return req


# (signal, request): each copies about 1 MB into every one of thousands of rows, gigabytes once built
AMPLIFIED: dict[str, tuple[str, Callable[[], Message]]] = {
    "logs": ("logs", lambda: logs_request(6_000, MB)),
    "metrics": ("metrics", lambda: metrics_request(3_000, MB)),
    "traces": ("traces", lambda: traces_request(6_000, MB)),
}
STUBS: dict[str, Callable[[grpc.Channel], Any]] = {
    "traces": lambda ch: trace_service_pb2_grpc.TraceServiceStub(ch),
    "logs": lambda ch: logs_service_pb2_grpc.LogsServiceStub(ch),
    "metrics": lambda ch: metrics_service_pb2_grpc.MetricsServiceStub(ch),
}


def _status_bytes(pid: int, field: str) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _tree(pid: int) -> list[int]:
    """``pid`` and every descendant (the forkserver and its decode workers)."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        for task in Path(f"/proc/{p}/task").glob("*"):
            try:
                todo += [int(c) for c in (task / "children").read_text().split()]
            except OSError:
                pass
    return out


class TreePeak:
    """The growth of a process tree's peak memory over a block: each process's high-water mark
    (``VmHWM``) is restarted from its RSS (``clear_refs``) at the start, and the growth is the sum
    of each process's peak less its RSS at the start."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.grown = 0

    def __enter__(self) -> TreePeak:
        self.start: dict[int, int] = {}
        for p in _tree(self.pid):
            try:
                Path(f"/proc/{p}/clear_refs").write_text("5")
            except OSError:
                continue
            self.start[p] = _status_bytes(p, "VmRSS")
        return self

    def __exit__(self, *exc: object) -> None:
        self.grown = sum(max(0, _status_bytes(p, "VmHWM") - self.start.get(p, 0)) for p in _tree(self.pid))


@pytest.fixture(scope="module")
def collector(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Collector]:
    tmp = tmp_path_factory.mktemp("amplification")
    env = {
        "RAGFAULT_DECODE_WORKERS": str(WORKERS),
        "RAGFAULT_MAX_INFLIGHT_BYTES": str(INFLIGHT),
        "RAGFAULT_MAX_DECOMPRESSED_BYTES": str(DECOMPRESSED),
        "RAGFAULT_MAX_BODY_BYTES": str(DECOMPRESSED),
        "RAGFAULT_LOG_LEVEL": "warning",
    }
    with Collector(["--db", str(tmp / "amp.duckdb")], tmp / "server.log", env=env) as c:
        c.wait_ready()
        # the decode worker started and warm: its first request's imports are not a request's growth
        httpx.post(f"{c.url}/v1/logs", content=gzip.compress(logs_request(1).SerializeToString()), headers=PB)
        yield c


@pytest.mark.parametrize("case", list(AMPLIFIED))
def test_an_amplified_request_is_413_over_http_before_its_rows_are_built(
    collector: Collector, case: str
) -> None:
    signal, build = AMPLIFIED[case]
    body = gzip.compress(build().SerializeToString(), 9)
    assert len(body) < 128_000  # a few KB on the wire (spans' random ids compress least)
    with TreePeak(collector.proc.pid) as peak:
        r = httpx.post(f"{collector.url}/v1/{signal}", content=body, headers=PB, timeout=120)
    assert r.status_code == 413, (r.status_code, r.text[:300])
    assert "max_decoded_bytes" in r.text
    assert "copying" in r.text  # names what each row copies
    assert peak.grown < REFUSED_BOUND, f"{case}: the tree grew by {peak.grown / MB:.0f} MB"
    assert collector.proc.poll() is None
    assert httpx.get(f"{collector.url}/healthz").status_code == 200


@pytest.mark.parametrize("case", list(AMPLIFIED))
def test_an_amplified_request_is_invalid_argument_over_grpc(collector: Collector, case: str) -> None:
    signal, build = AMPLIFIED[case]
    req = build()
    options = [("grpc.max_send_message_length", 64 * MB)]
    with grpc.insecure_channel(collector.grpc_endpoint, options=options) as channel:
        stub = STUBS[signal](channel)
        with TreePeak(collector.proc.pid) as peak, pytest.raises(grpc.RpcError) as err:
            stub.Export(req, timeout=120, compression=grpc.Compression.Gzip)
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT, err.value.details()
    assert "max_decoded_bytes" in (err.value.details() or "")
    assert peak.grown < REFUSED_BOUND, f"{case}: the tree grew by {peak.grown / MB:.0f} MB"
    assert collector.proc.poll() is None


def test_nothing_of_a_refused_request_is_stored(collector: Collector) -> None:
    assert collector.sql("SELECT count(*) FROM log_records WHERE resource_attributes LIKE '%rrrr%'") == [[0]]
    assert collector.sql("SELECT count(*) FROM metric_points WHERE length(description) > 1000") == [[0]]
    assert collector.sql("SELECT count(*) FROM spans WHERE length(resource_attributes) > 1000") == [[0]]


@pytest.mark.parametrize("signal", ["logs", "metrics"])
def test_a_million_small_rows_are_stored_whole_within_the_bound(collector: Collector, signal: str) -> None:
    n = 1_000_000
    req = logs_request(n) if signal == "logs" else metrics_request(n)
    body = gzip.compress(req.SerializeToString(), 1)
    del req
    with TreePeak(collector.proc.pid) as peak:
        r = httpx.post(f"{collector.url}/v1/{signal}", content=body, headers=PB, timeout=300)
    assert r.status_code == 200, r.text[:300]
    table = "log_records" if signal == "logs" else "metric_points"
    assert collector.sql(f"SELECT count(*) FROM {table} WHERE service_name = 'amp'")[0][0] >= n
    assert peak.grown < BOUND, f"{signal}: the tree grew by {peak.grown / MB:.0f} MB (bound {BOUND / MB:.0f})"


def test_rows_over_the_limit_but_not_amplified_are_413_too(tmp_path: Path) -> None:
    """A limit smaller than a request's rows: 413 naming the rows, nothing stored, and a request
    under it still stored (its rows needed more than its reservation: decoded again)."""
    env = {"RAGFAULT_DECODE_WORKERS": "0", "RAGFAULT_MAX_DECODED_BYTES": str(8 * MB)}
    with Collector(["--db", str(tmp_path / "lim.duckdb")], tmp_path / "server.log", env=env) as c:
        c.wait_ready()
        big = gzip.compress(logs_request(100_000).SerializeToString())
        r = httpx.post(f"{c.url}/v1/logs", content=big, headers=PB, timeout=120)
        assert r.status_code == 413, r.text[:300]
        assert "100,000 log records" in r.text
        fits = gzip.compress(logs_request(20_000).SerializeToString())
        r = httpx.post(f"{c.url}/v1/logs", content=fits, headers=PB, timeout=120)
        assert r.status_code == 200, r.text[:300]
        assert c.sql("SELECT count(*) FROM log_records") == [[20_000]]
        assert c.metric("ragfault_ingest_rebuilds_total") >= 1
