"""A full disk, on a real small filesystem (a tmpfs of 5 MiB mounted for the test; skipped where
mounting is not allowed): writes fail with 503 and nothing acknowledged is lost, /healthz says
why, a database DuckDB invalidated stops the server (its supervisor restarts it), and starting on
a full disk prints one line and exits 1."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.collector.otlp_build import new_trace_id, request, span
from tests.conftest import Server, free_ports, make_settings
from tests.waiting import wait_until


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    mnt = tmp_path / "disk"
    mnt.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    p = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=5m", "tmpfs", str(mnt)], capture_output=True)
    if p.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {p.stderr.decode().strip()}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


def test_a_full_disk_is_told_by_healthz_and_an_invalidated_store_stops_the_server(small_disk: Path) -> None:
    filler = small_disk / "filler"
    filler.write_bytes(b"\0" * (3 << 20))
    srv = Server(make_settings(small_disk, memory_limit="256MB"))
    acknowledged: list[str] = []
    try:
        for i in range(400):  # 60 KB spans of random text until the disk is full
            tid = new_trace_id()
            body = request([span(tid, attrs={"blob": os.urandom(30_000).hex(), "i": i})]).SerializeToString()
            r = srv.http.post("/v1/traces", content=body, headers={"Content-Type": "application/x-protobuf"})
            if r.status_code != 200:
                break
            acknowledged.append(tid.hex())
        assert r.status_code == 503 and r.headers["Retry-After"], (r.status_code, r.text[:200])
        assert acknowledged
        h = srv.http.get("/healthz")
        assert h.status_code == 503, h.text
        assert h.json()["status"] == "unavailable" and "no space left on device" in h.json()["reason"]

        # a checkpoint on the full disk (the writer checkpoints when ingest pauses) invalidates the
        # database: the server stops serving by itself
        # (another connection's write transaction, e.g. the evaluation writing verdicts, makes DuckDB
        # refuse a CHECKPOINT for the moment: asked again until it runs, and fails on the full disk)
        def checkpoint() -> str:
            try:
                srv.runtime.writer.call(lambda con: con.execute("CHECKPOINT"), timeout=60)
            except Exception as exc:  # noqa: BLE001
                return str(exc)
            raise AssertionError("a checkpoint on the full disk succeeded")

        error = wait_until(
            checkpoint,
            lambda e: "other write transactions" not in e,
            what="a CHECKPOINT DuckDB runs",
            timeout=60,
        )
        assert "No space left on device" in error, error
        assert srv.runtime.store.fatal
        wait_until(srv.thread.thread.is_alive, lambda alive: not alive, what="the server to stop", timeout=60)
    finally:
        srv.stop()
    filler.unlink()  # space is back: a new process opens the database, every acknowledged span in it
    srv = Server(make_settings(small_disk, memory_limit="256MB"))
    try:
        assert srv.http.get("/healthz").json()["status"] == "ok"
        stored = {row[0] for row in srv.sql("SELECT trace_id FROM spans")}
        assert set(acknowledged) <= stored
    finally:
        srv.stop()


def test_starting_on_a_full_disk_prints_one_line_and_exits_1(small_disk: Path) -> None:
    filler = small_disk / "filler"
    with open(filler, "wb") as fh:
        try:
            while True:
                fh.write(b"\0" * 65536)
                fh.flush()
        except OSError:
            pass
    db = small_disk / "new.duckdb"
    env = dict(os.environ, RAGFAULT_DECODE_WORKERS="0")
    http_port, grpc_port = free_ports(2)
    p = subprocess.run(
        [sys.executable, "-m", "ragfault.cli", "serve", "--db", str(db), "--http-port", str(http_port),
         "--grpc-port", str(grpc_port)],
        capture_output=True, text=True, timeout=120, env=env,
    )  # fmt: skip
    assert p.returncode == 1, (p.returncode, p.stderr[-500:])
    lines = [line for line in p.stderr.splitlines() if line.strip()]
    assert lines == [
        f"ragfault: cannot write database {db}: no space left on device; free space and start again"
    ], p.stderr[-800:]
