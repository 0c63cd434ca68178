"""Two ``ragfault serve --store ducklake`` processes on one lake, each fed by the real OTLP/HTTP
exporter: every acknowledged span is read exactly once, also when it was sent to both, and a
collector killed with SIGKILL and started again stores no second copy of what it is sent again."""

from __future__ import annotations

import random
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExportResult
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from collector.store.lake.store import LakeStore
from tests import served
from tests.store.conftest import Lake

TRACES = 30


# a lake collector in the tests: no decode workers, a small memory limit, no network for extensions,
# and no scheduled maintenance unless a test sets it
COLLECTOR_ENV = {"RAGFAULT_DECODE_WORKERS": "0", "RAGFAULT_MEMORY_LIMIT": "1GB",
            "RAGFAULT_EXTENSION_REPOSITORY": "false", "RAGFAULT_LAKE_MAINTENANCE_SECONDS": "0"}  # fmt: skip


class Collector(served.Collector):
    """``ragfault serve --store ducklake`` on ``lake``."""

    def __init__(
        self, lake: Lake, log: Path, extra_env: dict[str, str] | None = None, args: tuple[str, ...] = ()
    ) -> None:
        store = ["--store", "ducklake", "--catalog", lake.catalog, "--data-path", str(lake.data_path)]
        super().__init__([*store, *args], log, {**COLLECTOR_ENV, **(extra_env or {})})


@pytest.fixture
def collectors(lake: Lake, tmp_path: Path) -> Iterator[list[Collector]]:
    started = [Collector(lake, tmp_path / f"collector{i}.log") for i in range(2)]
    try:
        for c in started:
            c.wait_ready()
        yield started
    finally:
        for c in started:
            c.stop()


def make_traces(n: int) -> list[list[ReadableSpan]]:
    """``n`` traces of a root and three children, made by the real SDK (kept in memory)."""
    memory = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "lake-test"}))
    provider.add_span_processor(SimpleSpanProcessor(memory))
    tracer = provider.get_tracer("lake-test")
    for i in range(n):
        with tracer.start_as_current_span(
            "query", attributes={"openinference.span.kind": "CHAIN", "input.value": f"q{i}"}
        ):
            for name in ("retrieve", "rerank", "llm"):
                with tracer.start_as_current_span(name):
                    pass
    traces: dict[int, list[ReadableSpan]] = {}
    for s in memory.get_finished_spans():
        assert s.context is not None
        traces.setdefault(s.context.trace_id, []).append(s)
    provider.shutdown()
    return list(traces.values())


def key(s: ReadableSpan) -> tuple[str, str]:
    assert s.context is not None
    return format(s.context.trace_id, "032x"), format(s.context.span_id, "016x")


def test_two_collectors_on_one_lake_read_every_acknowledged_span_once(
    collectors: list[Collector], lake: Lake
) -> None:
    a, b = collectors
    exporters = [OTLPSpanExporter(endpoint=f"{c.url}/v1/traces", timeout=60) for c in collectors]
    rng = random.Random(18)
    traces = make_traces(TRACES)
    acked: set[tuple[str, str]] = set()
    lock = threading.Lock()
    sent_to: dict[tuple[str, str], set[int]] = {}  # span -> the collectors it was sent to

    def send(i: int, spans: list[ReadableSpan]) -> None:
        assert exporters[i].export(spans) is SpanExportResult.SUCCESS
        with lock:
            acked.update(key(s) for s in spans)
            for s in spans:
                sent_to.setdefault(key(s), set()).add(i)

    # rounds of one request to each collector, the two sent at once (their commits race)
    first: list[list[ReadableSpan]] = [[], []]
    retry: list[list[ReadableSpan]] = [[], []]
    for n, trace in enumerate(traces):
        if n % 3 == 0:  # the whole trace to one collector
            first[n % 2] += trace
        elif n % 3 == 1:  # its spans split between the two
            first[0] += trace[:2]
            first[1] += trace[2:]
        else:  # sent to one, then re-sent (a retry) to the other
            first[n % 2] += trace
            retry[1 - n % 2] += trace
    # and a request re-sent to the same collector, some of it also to the other
    again = [s for t in rng.sample(traces, 10) for s in t]
    for requests in (first, retry, [again, again[: len(again) // 2]]):
        with ThreadPoolExecutor(2) as pool:
            list(pool.map(send, (0, 1), requests))

    spans = 4 * TRACES
    assert len(acked) == spans
    for c in collectors:  # what users read, through either collector's SQL API
        total, distinct = c.sql("SELECT count(*), count(DISTINCT (trace_id, span_id)) FROM spans")[0]
        assert (total, distinct) == (spans, spans)
        assert {tuple(r) for r in c.sql("SELECT trace_id, span_id FROM spans")} == acked
        assert c.sql("SELECT count(*), sum(span_count), bool_and(has_root) FROM traces")[0] == [
            TRACES,
            spans,
            True,
        ]
        assert c.sql("SELECT count(*) FROM steps")[0] == [spans]
    # the raw table holds one copy a collector a span was sent to (a collector drops its own
    # re-sent spans at commit; the other's it cannot know of), and compaction removes the extra ones
    raw = a.sql("SELECT count(*) FROM span_rows")[0][0]
    assert raw == sum(len(c) for c in sent_to.values()) > spans

    # b killed outright and started again: it still knows what the lake received lately
    b.kill()
    b = Collector(lake, b.log.with_name("collector1-restarted.log"))
    collectors.append(b)
    b.wait_ready()
    assert (
        OTLPSpanExporter(endpoint=f"{b.url}/v1/traces", timeout=60).export(again) is SpanExportResult.SUCCESS
    )
    assert b.sql("SELECT count(*) FROM span_rows")[0][0] == raw
    assert b.sql("SELECT count(*), count(DISTINCT (trace_id, span_id)) FROM spans")[0] == [spans, spans]

    maintenance = LakeStore(lake.catalog, lake.data_path, extension_repository=False)
    try:
        deleted = maintenance.compact_duplicates()
    finally:
        maintenance.close()
    assert deleted["span_rows"] == raw - spans
    assert b.sql("SELECT count(*), count(DISTINCT (trace_id, span_id)) FROM span_rows")[0] == [spans, spans]
    assert {tuple(r) for r in b.sql("SELECT trace_id, span_id FROM spans")} == acked
