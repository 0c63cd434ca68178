"""The writer's waiting share: the part of the last seconds during which span batches waited for a
commit. It is the settle loop's signal of ingest pressure: spans held behind a job count for as long
as they wait, and once committed the share of a window after that is zero. Time is the test's clock."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from collector.ingest.span_rows import flatten
from collector.metrics import Metrics
from collector.normalize import DEFAULT_SOURCE_KEYS
from collector.store import Store
from collector.store.base import Con
from collector.store.schema import batch_to_arrow
from collector.store.writer import Writer
from ragfault_core.errors import RetryableError
from tests.collector.otlp_build import rag_spans, request


def _batch(trace_id: bytes):  # noqa: ANN202
    return batch_to_arrow(flatten(request(rag_spans(trace_id)), source_keys=DEFAULT_SOURCE_KEYS))


class Clock:
    """Seconds that pass only when the test says so."""

    def __init__(self, at: float = 1000.0) -> None:
        self.at = at

    def __call__(self) -> float:
        return self.at

    def advance(self, seconds: float) -> None:
        self.at += seconds


def test_the_share_counts_the_time_spans_wait_for_a_commit(tmp_path: Path) -> None:
    store = Store(tmp_path / "q.duckdb")
    clock = Clock()
    writer = Writer(store, Metrics(), clock=clock)
    writer.start()
    release = threading.Event()
    try:
        assert writer.waiting_share(2.0) == 0.0
        holding = writer.submit_job(lambda tx: release.wait(30))  # e.g. an evaluation batch's rows
        first = writer.submit(_batch(b"\x01" * 16))  # waits from 1000.0
        clock.advance(0.4)
        second = writer.submit(_batch(b"\x02" * 16))  # joins the spell the first one started
        assert writer.waiting_share(0.3) == 1.0  # spans waited through all of the last 0.3 s
        assert writer.waiting_share(0.8) == pytest.approx(0.4 / 0.8)  # and not before 1000.0
        assert writer.queued_spans == 4
        release.set()
        assert holding.result(30) is True
        assert first.result(30) == 2 and second.result(30) == 2  # the spell ends at 1000.4
        assert writer.queued_spans == 0
        clock.advance(0.3)
        assert writer.waiting_share(0.25) == 0.0  # nothing waited since the commit
        assert writer.waiting_share(5.0) == pytest.approx(0.4 / 5.0)  # the spell is remembered

        # a write that fails ends its spell too
        def drop(tx: Con) -> None:
            tx.execute("DROP TABLE spans")

        writer.call(drop)
        failed = writer.submit(_batch(b"\x03" * 16))  # waits from 1000.7 until it fails, at 1000.7
        with pytest.raises(RetryableError, match="store write failed"):
            failed.result(30)
        assert writer.queued_spans == 0
        clock.advance(0.3)
        assert writer.waiting_share(0.25) == 0.0
        assert writer.waiting_share(5.0) == pytest.approx(0.4 / 5.0)  # the failed spell took no time
        # the spells older than the history are forgotten
        clock.advance(20.0)
        assert writer.waiting_share(10.0) == 0.0
    finally:
        release.set()
        writer.stop()
        store.close()
