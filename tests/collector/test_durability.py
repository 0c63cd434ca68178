"""No acknowledged span is lost (also under SIGKILL right after the ack), re-sent spans never duplicate,
and late spans of a settled trace are accepted. The server runs as a real ``ragfault serve`` process."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests import served
from tests.collector.otlp_build import new_span_id, new_trace_id, request, span
from tests.served import api_client
from tests.waiting import wait_equal

PB = {"Content-Type": "application/x-protobuf"}


class ServeProcess(served.Collector):
    """``ragfault serve`` in a child process on a given database file, with a client for its API."""

    def __init__(self, db: Path, log: Path) -> None:
        super().__init__(["--db", str(db), "--settle-seconds", "0.5"], log, cwd=db.parent)
        self.db = db
        self.http = api_client(self.url)
        try:
            self.wait_ready(60)
        except served.NotReady:
            self.kill()
            raise

    def kill(self) -> None:
        super().kill()
        self.http.close()


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Path]:
    yield tmp_path / "durable.duckdb"


def test_sigkill_after_acks_loses_nothing_and_duplicates_nothing(db: Path, tmp_path: Path) -> None:
    first = ServeProcess(db, tmp_path / "serve1.log")
    acked: list[tuple[bytes, list[tuple[str, str]]]] = []  # (request body, its (trace_id, span_id)s)
    lock = threading.Lock()
    stop = threading.Event()
    target = 120  # acknowledged requests before the kill

    def sender(worker: int) -> None:
        with httpx.Client(base_url=first.url, timeout=30) as client:
            while not stop.is_set():
                tid = new_trace_id()
                root = new_span_id()
                spans = [span(tid, span_id=root, name="root")]
                spans += [span(tid, parent=root, name=f"w{worker}-{i}") for i in range(7)]
                body = request(spans, service=f"burst-{worker}").SerializeToString()
                try:
                    r = client.post("/v1/traces", content=body, headers=PB)
                except httpx.TransportError:
                    return  # the server is gone
                if r.status_code == 200:
                    with lock:
                        acked.append((body, [(tid.hex(), s.span_id.hex()) for s in spans]))
                        if len(acked) >= target:
                            stop.set()

    threads = [threading.Thread(target=sender, args=(w,)) for w in range(4)]
    try:
        for t in threads:
            t.start()
        assert stop.wait(120), f"only {len(acked)} requests were acknowledged"
        first.proc.send_signal(signal.SIGKILL)  # right after the last ack, other requests in flight
    finally:
        stop.set()
        first.kill()
        for t in threads:
            t.join(30)
    assert first.proc.returncode == -signal.SIGKILL

    second = ServeProcess(db, tmp_path / "serve2.log")
    try:
        stored = {(r[0], r[1]): r[2] for r in second.sql(
            "SELECT trace_id, span_id, count(*) FROM spans GROUP BY ALL")}  # fmt: skip
        expected = {ids for _, spans in acked for ids in spans}
        missing = expected - stored.keys()
        assert not missing, f"{len(missing)} acknowledged spans lost, e.g. {sorted(missing)[:3]}"
        assert all(n == 1 for n in stored.values())
        # traces.span_count agrees with the spans themselves (the bookkeeping committed with them)
        assert second.sql(
            "SELECT count(*) FROM traces t JOIN (SELECT trace_id, count(*) n FROM spans GROUP BY 1) s "
            "USING (trace_id) WHERE t.span_count <> s.n"
        ) == [[0]]

        # Re-sending everything that was acknowledged stores nothing new.
        before = second.sql(
            "SELECT count(*), sum(span_count) FROM spans, (SELECT sum(span_count) span_count FROM traces)"
        )
        for body, _ in acked[:40]:
            assert second.http.post("/v1/traces", content=body, headers=PB).status_code == 200
        after = second.sql(
            "SELECT count(*), sum(span_count) FROM spans, (SELECT sum(span_count) span_count FROM traces)"
        )
        assert after == before
        assert second.sql(
            "SELECT count(*) FROM (SELECT trace_id, span_id FROM spans GROUP BY ALL HAVING count(*) > 1)"
        ) == [[0]]
        metrics = second.http.get("/metrics").text
        assert "ragfault_spans_duplicate_total 320" in metrics.splitlines(), metrics
    finally:
        second.kill()


def test_late_span_of_a_settled_trace_is_accepted_and_reassembled(db: Path, tmp_path: Path) -> None:
    srv = ServeProcess(db, tmp_path / "serve.log")
    try:
        tid, root = new_trace_id(), new_span_id()
        body = request([span(tid, span_id=root, name="root"), span(tid, parent=root, name="early")])
        assert srv.http.post("/v1/traces", content=body.SerializeToString(), headers=PB).status_code == 200

        def trace_row() -> list[object]:
            return srv.sql(
                "SELECT span_count, assembled_spans, settled_at IS NOT NULL FROM traces WHERE trace_id = $t",
                t=tid.hex(),
            )[0]

        wait_equal(trace_row, [2, 2, True], timeout=30, every=0.1)

        late = request([span(tid, parent=root, name="late")]).SerializeToString()
        assert srv.http.post("/v1/traces", content=late, headers=PB).status_code == 200
        assert srv.sql("SELECT span_count FROM traces WHERE trace_id = $t", t=tid.hex()) == [[3]]
        assert sorted(r[0] for r in srv.sql("SELECT name FROM spans WHERE trace_id = $t", t=tid.hex())) == [
            "early", "late", "root"
        ]  # fmt: skip
        wait_equal(trace_row, [3, 3, True], timeout=30, every=0.1)  # the settler assembled the trace again
        # the late span, sent again, changes nothing
        assert srv.http.post("/v1/traces", content=late, headers=PB).status_code == 200
        assert srv.sql("SELECT span_count FROM traces WHERE trace_id = $t", t=tid.hex()) == [[3]]
    finally:
        srv.kill()


def test_cli_has_a_main_guard() -> None:
    # ``python -m ragfault.cli`` is how the process tests start the server.
    out = subprocess.run([sys.executable, "-m", "ragfault.cli", "--version"], capture_output=True, text=True,
                         timeout=60, env={**os.environ})  # fmt: skip
    assert out.returncode == 0 and "ragfault" in out.stdout
