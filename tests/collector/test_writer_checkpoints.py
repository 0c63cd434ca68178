"""When the writer checkpoints: soon once nothing arrives, rarely while only jobs (an evaluation
backlog) keep it busy."""

from __future__ import annotations

import time
from pathlib import Path

import duckdb

from collector.metrics import Metrics
from collector.store.duck import Store
from collector.store.writer import Writer

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
        deadline = time.monotonic() + 30
        while metrics.get("ragfault_checkpoints_total") == before and time.monotonic() < deadline:
            time.sleep(0.05)
        assert metrics.get("ragfault_checkpoints_total") == before + 1
        assert store.wal_bytes() < 256 * KB
        assert writer.call(lambda con: con.execute("SELECT count(*) FROM filler").fetchall()[0][0]) > 0
    finally:
        writer.stop()
        store.close()
