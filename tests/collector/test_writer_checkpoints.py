"""When the writer checkpoints: soon once nothing arrives, rarely while only jobs (an evaluation
backlog) keep it busy, and at a bounded WAL size under ingest that never pauses."""

from __future__ import annotations

import random
from pathlib import Path

import duckdb
import pytest

from collector.ingest.batch import ArrowBatch
from collector.ingest.span_rows import flatten
from collector.metrics import Metrics
from collector.store import Store
from collector.store.schema import batch_to_arrow
from collector.store.writer import Writer
from tests.clock import ManualClock
from tests.collector.otlp_build import new_span_id, new_trace_id, request, span
from tests.waiting import wait_until

KB = 1 << 10


def _fill(con: duckdb.DuckDBPyConnection) -> None:
    # about 100 KB of incompressible text in the WAL
    con.execute("INSERT INTO filler SELECT md5(random()::VARCHAR) || md5(random()::VARCHAR) FROM range(1500)")


def test_jobs_alone_checkpoint_only_past_their_larger_threshold(tmp_path: Path) -> None:
    store = Store(tmp_path / "ck.duckdb")
    metrics = Metrics()
    writer = Writer(
        store,
        metrics,
        idle_checkpoint_seconds=0.3,
        idle_checkpoint_bytes=256 * KB,
        jobs_checkpoint_bytes=4096 * KB,
    )
    writer.start()
    try:

        def state(con: duckdb.DuckDBPyConnection) -> tuple[float, int]:
            # read on the writer thread between jobs: no idle pause can slip in before it
            return metrics.get("ragfault_checkpoints_total"), store.wal_bytes()

        writer.call(lambda con: con.execute("CREATE TABLE filler (x VARCHAR)"))
        # jobs queued back to back, well past the idle threshold but under the jobs' one
        futures = [writer.submit_job(_fill) for _ in range(12)]
        checkpoints, wal = writer.submit_job(state).result(60)
        assert all(f.done() for f in futures)
        assert checkpoints == 0, "a checkpoint between jobs below the jobs' threshold"
        assert wal > 4 * 256 * KB, "the jobs wrote less than the test needs"

        # past the jobs' threshold: checkpointed between two jobs, without any pause
        while wal < 4096 * KB:
            futures = [writer.submit_job(_fill) for _ in range(8)]
            checkpoints, wal = writer.submit_job(state).result(60)
            if checkpoints:
                break
        assert checkpoints >= 1
        assert store.wal_bytes() < 4096 * KB

        # then nothing arrives: the idle checkpoint takes what is left once it passes its threshold
        for _ in range(6):
            writer.submit_job(_fill)
        before, wal = writer.submit_job(state).result(60)
        assert wal > 256 * KB
        checkpoints = wait_until(lambda: metrics.get("ragfault_checkpoints_total"), lambda n: n != before,
                                 what="the idle checkpoint")  # fmt: skip
        assert checkpoints == before + 1
        assert store.wal_bytes() < 256 * KB
        assert writer.call(lambda con: con.execute("SELECT count(*) FROM filler").fetchall()[0][0]) > 0
    finally:
        writer.stop()
        store.close()


def _traces(n: int) -> ArrowBatch:
    """``n`` traces of two spans, each with a document of ~2 KB of incompressible text."""
    spans = []
    for _ in range(n):
        tid, root = new_trace_id(), new_span_id()
        text = "".join(f"{random.getrandbits(64):016x}" for _ in range(128))
        docs = {"retrieval.documents.0.document.id": "d", "retrieval.documents.0.document.content": text}
        spans.append(span(tid, span_id=root, name="query", attrs={"openinference.span.kind": "CHAIN"}))
        spans.append(
            span(tid, parent=root, name="retrieve", attrs={"openinference.span.kind": "RETRIEVER", **docs})
        )
    return batch_to_arrow(flatten(request(spans)))


@pytest.mark.parametrize("busy_bytes", [512 * KB, 0])
def test_steady_ingest_checkpoints_once_the_wal_passes_its_threshold(tmp_path: Path, busy_bytes: int) -> None:
    """Commits that follow each other without a pause (no idle checkpoint can run) checkpoint once
    the WAL holds ``busy_checkpoint_bytes``, between commits: the WAL, and the memory its data holds,
    stays near that size. With the threshold off, only DuckDB's hard cap would (not reached here)."""
    store = Store(tmp_path / "busy.duckdb")
    metrics = Metrics()
    writer = Writer(
        store,
        metrics,
        idle_checkpoint_seconds=3600,  # the queue never waits that long: no idle checkpoint
        busy_checkpoint_bytes=busy_bytes,
        clock=ManualClock().monotonic,  # never advanced: ingest is never seen to pause
    )
    writer.start()
    try:
        batches = [_traces(40) for _ in range(30)]  # ~200 KB of WAL each
        largest = 0
        for b in batches:
            writer.submit(b).result(60)
            largest = max(largest, writer.call(lambda con: store.wal_bytes(), timeout=60))
        checkpoints = metrics.get("ragfault_checkpoints_total")
        stored = writer.call(
            lambda con: con.execute("SELECT count(*) FROM spans").fetchall()[0][0], timeout=60
        )
        assert stored == sum(len(b) for b in batches)
        # every checkpoint's time is in the summary that /metrics shows
        assert f"ragfault_checkpoint_seconds_count {checkpoints:g}" in metrics.render()
        if busy_bytes:
            assert checkpoints >= 3
            # checked after every commit: never more than one commit's worth past the threshold
            assert largest < busy_bytes + 400 * KB
        else:
            assert checkpoints == 0
            assert largest > 4 * 512 * KB
    finally:
        writer.stop()
        store.close()


def test_the_servers_checkpoint_thresholds_are_its_settings(tmp_path: Path) -> None:
    """``[server] checkpoint_wal_bytes`` and ``idle_checkpoint_wal_bytes`` are the writer's busy and
    idle thresholds; by default the store's own, and under 1 MiB a clear error at start."""
    from collector.config import build_settings
    from collector.runtime import Runtime
    from collector.store.file.checkpoint import BUSY_CHECKPOINT_BYTES, IDLE_CHECKPOINT_BYTES
    from ragfault_core.errors import ConfigError

    defaults = build_settings()
    assert (defaults.checkpoint_wal_bytes, defaults.idle_checkpoint_wal_bytes) == (
        BUSY_CHECKPOINT_BYTES,
        IDLE_CHECKPOINT_BYTES,
    )
    cfg = tmp_path / "ragfault.toml"
    cfg.write_text(
        f'[server]\ndb = "{tmp_path / "s.duckdb"}"\ncheckpoint_wal_bytes = {3 << 20}\n'
        f"idle_checkpoint_wal_bytes = {2 << 20}\ndecode_workers = 0\n"
    )
    runtime = Runtime(build_settings(cfg))
    try:
        assert (runtime.writer.busy_checkpoint_bytes, runtime.writer.idle_checkpoint_bytes) == (
            3 << 20,
            2 << 20,
        )
    finally:
        runtime.store.close()
    cfg.write_text("[server]\nidle_checkpoint_wal_bytes = 1000\n")
    with pytest.raises(ConfigError, match="idle_checkpoint_wal_bytes"):
        build_settings(cfg)
