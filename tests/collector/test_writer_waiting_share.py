"""The writer's waiting share: the part of the last seconds during which span batches waited for a
commit. It is the settle loop's signal of ingest pressure: spans held behind a job count for as long
as they wait, and once committed the share of a window after that is zero."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import duckdb
import pytest

from collector.batch import flatten
from collector.errors import RetryableError
from collector.metrics import Metrics
from collector.normalize import DEFAULT_SOURCE_KEYS
from collector.store.duck import Store
from collector.store.schema import batch_to_arrow
from collector.store.writer import Writer
from tests.collector.otlp_build import rag_spans, request


def _batch(trace_id: bytes):  # noqa: ANN202
    return batch_to_arrow(flatten(request(rag_spans(trace_id)), source_keys=DEFAULT_SOURCE_KEYS))


def test_the_share_counts_the_time_spans_wait_for_a_commit(tmp_path: Path) -> None:
    store = Store(tmp_path / "q.duckdb")
    writer = Writer(store, Metrics())
    writer.start()
    release = threading.Event()
    try:
        assert writer.waiting_share(2.0) == 0.0
        holding = writer.submit_job(lambda con: release.wait(30))  # e.g. an evaluation batch's rows
        first = writer.submit(_batch(b"\x01" * 16))
        time.sleep(0.4)
        second = writer.submit(_batch(b"\x02" * 16))  # joins the spell the first one started
        assert writer.waiting_share(0.3) == 1.0  # spans waited through all of the last 0.3 s
        assert writer.queued_spans == 4
        release.set()
        assert holding.result(30) is True
        assert first.result(30) == 2 and second.result(30) == 2
        assert writer.queued_spans == 0
        time.sleep(0.3)
        assert writer.waiting_share(0.25) == 0.0  # nothing waited since the commit
        assert 0.0 < writer.waiting_share(5.0) < 1.0  # the spell is remembered, and was not all of it

        # a write that fails ends its spell too
        def drop(con: duckdb.DuckDBPyConnection) -> None:
            con.execute("DROP TABLE spans")

        writer.call(drop)
        failed = writer.submit(_batch(b"\x03" * 16))
        with pytest.raises(RetryableError, match="store write failed"):
            failed.result(30)
        assert writer.queued_spans == 0
        time.sleep(0.3)
        assert writer.waiting_share(0.25) == 0.0
    finally:
        release.set()
        writer.stop()
        store.close()
