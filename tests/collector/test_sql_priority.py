"""SQL API calls run on threads whose scheduling priority is lowered by ``sql_nice``, so a heavy
query leaves ingest its share of the cores (``bench/hostile.py`` measures the latency)."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import httpx

from tests.conftest import Server, StartServer, make_settings
from tests.needs import duckdb_at_least

SLOW = "SELECT sum(hash(a.range * b.range)) FROM range(100000000) a, range(1000) b"


def _threads() -> dict[int, tuple[int, int]]:
    """Each thread of this process: (nice, CPU ticks used so far)."""
    out = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            stat = Path(f"/proc/self/task/{tid}/stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        out[int(tid)] = (int(fields[16]), int(fields[11]) + int(fields[12]))
    return out


def test_a_running_sql_call_works_on_a_thread_of_lower_priority(tmp_path: Path) -> None:
    base = os.getpriority(os.PRIO_PROCESS, 0)
    lowered = min(19, base + 7)
    # one DuckDB thread (the default on two cores with decode workers): a query runs on the thread
    # that calls it; DuckDB's own threads, when there are more, are shared with ingest's commits
    srv = Server(make_settings(tmp_path, sql_nice=7, sql_timeout_seconds=3, duckdb_threads=1))
    answers: list[int] = []
    try:
        assert not [t for t, (nice, _) in _threads().items() if nice == lowered]
        query = threading.Thread(
            target=lambda: answers.append(srv.http.post("/api/v1/sql", json={"sql": SLOW}).status_code)
        )
        query.start()
        working: list[int] = []
        seen = _threads()
        while query.is_alive() and not working:
            query.join(0.2)
            now = _threads()
            # a thread at the lowered priority that used the CPU meanwhile: the one running the query
            working = [
                t for t, (nice, cpu) in now.items() if nice == lowered and cpu > seen.get(t, (0, cpu))[1]
            ]
            seen = now
        query.join()
        assert working, "no thread of lowered priority ran while the query did"
        assert answers == [408]
        assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == base  # others keep theirs
        assert srv.sql("SELECT 42") == [[42]]
    finally:
        srv.stop()


def test_a_call_whose_request_is_gone_gives_its_slot_back(start_server: StartServer) -> None:
    srv = start_server(sql_max_concurrent=1, sql_timeout_seconds=2)
    try:  # the client gives up long before the query's time limit
        httpx.post(srv.url + "/api/v1/sql", json={"sql": SLOW}, timeout=0.3)
    except httpx.TimeoutException:
        pass
    # once the abandoned query has timed out on its thread, the one slot is free again
    while (r := srv.http.post("/api/v1/sql", json={"sql": "SELECT 42"})).status_code == 429:
        threading.Event().wait(0.1)
    assert r.status_code == 200 and r.json()["rows"] == [[42]]


@duckdb_at_least(2, "the thread cap during an SQL call is applied on DuckDB 2 only")
def test_with_duckdb_workers_a_running_sql_call_runs_only_on_lowered_threads(tmp_path: Path) -> None:
    """With more than one DuckDB thread, DuckDB's own workers (shared with ingest's commits, at the
    server's priority) would run a user query's tasks: on DuckDB 2 nearly all of them, since a
    worker takes a query's first task before the calling thread does. While an SQL API call runs,
    the pool is down to the calling threads."""
    base = os.getpriority(os.PRIO_PROCESS, 0)
    lowered = min(19, base + 7)
    srv = Server(make_settings(tmp_path, sql_nice=7, sql_timeout_seconds=3, duckdb_threads=2))
    look = srv.runtime.store.cursor()

    def threads_setting() -> int:
        row = look.execute("SELECT current_setting('threads')").fetchone()
        assert row is not None
        return int(row[0])

    answers: list[int] = []
    try:
        assert threads_setting() == 2
        query = threading.Thread(
            target=lambda: answers.append(srv.http.post("/api/v1/sql", json={"sql": SLOW}).status_code)
        )
        start = _threads()
        query.start()
        during: set[int] = set()
        while query.is_alive():
            during.add(threads_setting())
            query.join(0.1)
        used = {t: cpu - start.get(t, (0, 0))[1] for t, (_, cpu) in _threads().items()}
        nice = {t: n for t, (n, _) in _threads().items()}
        assert answers == [408]
        assert 1 in during, f"DuckDB kept {during} threads while the call ran"
        assert threads_setting() == 2  # and has them back once no call runs
        # the CPU the query took went to threads of lowered priority, not to DuckDB's own workers
        busiest = max(used, key=lambda t: used[t])
        assert used[busiest] > 0 and nice.get(busiest) == lowered, (used[busiest], nice.get(busiest))
        assert srv.sql("SELECT 42") == [[42]]
    finally:
        look.close()
        srv.stop()
