"""``deploy/haproxy.cfg`` in front of three ``ragfault serve --store ducklake`` collectors on one lake,
fed by the real OTLP exporters over HTTP and gRPC at once; one collector is killed with SIGKILL while
they send. Every acknowledged span is in ``spans`` exactly once, and the balancer spread the requests
over the collectors (each live one stored some); the lake's scheduled maintenance, in whichever
collector holds its lease, removes the raw copies of spans sent to two collectors."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HttpExporter
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExportResult

from tests.haproxy import HAProxy, behind_haproxy, haproxy_binary
from tests.needs import missing
from tests.store.conftest import Lake
from tests.store.lake.test_two_collectors import Collector, key, make_traces
from tests.waiting import wait_until

TRACES, PER_REQUEST = 60, 5


@pytest.fixture
def balanced(lake: Lake, tmp_path: Path) -> Iterator[tuple[list[Collector], HAProxy]]:
    if haproxy_binary() is None:
        missing("haproxy", "haproxy is not installed")
    # the lake's maintenance every second (whichever collector holds the lease runs it)
    env = {"RAGFAULT_LAKE_MAINTENANCE_SECONDS": "1", "RAGFAULT_LAKE_KEEP_SNAPSHOTS_SECONDS": "0"}
    collectors = [Collector(lake, tmp_path / f"collector{i}.log", env) for i in range(3)]
    with behind_haproxy(collectors, tmp_path / "haproxy.log") as lb:
        yield collectors, lb


def test_haproxy_spreads_http_and_grpc_over_collectors_and_a_killed_one_loses_nothing(
    balanced: tuple[list[Collector], HAProxy],
) -> None:
    collectors, lb = balanced
    traces = make_traces(TRACES)
    requests = [[s for t in traces[i : i + PER_REQUEST] for s in t] for i in range(0, TRACES, PER_REQUEST)]
    over_http, over_grpc = requests[0::2], requests[1::2]
    exporters = {
        "http": HttpExporter(endpoint=f"{lb.url}/v1/traces", timeout=60),
        "grpc": GrpcExporter(endpoint=lb.grpc_endpoint, insecure=True, timeout=60),
    }
    acked: set[tuple[str, str]] = set()
    lock = threading.Lock()
    halfway = threading.Barrier(3)  # the two senders and this thread, which kills a collector between

    def send(kind: str, batches: list[list[ReadableSpan]]) -> None:
        for n, spans in enumerate(batches):
            if n == 2:
                halfway.wait(120)  # both senders are mid-run: the kill happens between their requests
                halfway.wait(120)
            assert exporters[kind].export(spans) is SpanExportResult.SUCCESS, kind
            with lock:
                acked.update(key(s) for s in spans)

    with ThreadPoolExecutor(3) as pool:
        done = [pool.submit(send, "http", over_http), pool.submit(send, "grpc", over_grpc)]
        halfway.wait(120)
        collectors[1].kill()  # SIGKILL
        halfway.wait(120)
        for f in done:
            f.result(timeout=600)
    for e in exporters.values():
        e.shutdown()

    assert len(acked) == 4 * TRACES
    live = [collectors[0], collectors[2]]
    after = [c.metric("ragfault_spans_stored_total") for c in live]
    # the requests were spread: both collectors that stayed up stored spans (a collector's counter
    # moves just after its acknowledgement, so it is read once every request was answered)
    assert all(n > 0 for n in after), after
    # what users read through the balancer: every acknowledged span exactly once
    # (a read sent as the balancer's health checks are still taking the killed collector out may
    # come back 502, as the deploy note says; a user's client asks again)
    answers: list[int] = []
    for _ in range(5):
        r = httpx.post(
            f"{lb.url}/api/v1/sql",
            json={"sql": "SELECT trace_id, span_id, count(*) FROM spans GROUP BY ALL", "max_rows": 10_000},
            timeout=60,
        )
        answers.append(r.status_code)
        if r.status_code not in (502, 503):
            break
    assert r.status_code == 200, (answers, r.text)
    rows = r.json()["rows"]
    assert {(t, s) for t, s, _ in rows} == acked
    assert all(n == 1 for _, _, n in rows)

    # the same request straight to both live collectors: two raw copies, until a maintenance turn
    # (the lease holder's) removes one; what users read never changes
    again = requests[0]
    for c in live:
        assert (
            HttpExporter(endpoint=f"{c.url}/v1/traces", timeout=60).export(again) is SpanExportResult.SUCCESS
        )
    total, distinct = wait_until(
        lambda: live[0].sql("SELECT count(*), count(DISTINCT (trace_id, span_id)) FROM span_rows")[0],
        lambda row: row[0] == row[1],
        what="no span stored twice (rows, distinct)",
        timeout=120,
        every=0.2,
    )
    assert (total, distinct) == (4 * TRACES, 4 * TRACES)
    assert live[1].sql("SELECT count(*) FROM spans") == [[4 * TRACES]]
    assert sum(c.log.read_text().count("lake maintenance by") for c in collectors) >= 1
