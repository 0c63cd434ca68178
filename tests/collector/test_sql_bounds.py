"""The SQL API's bounds and sandbox: result bytes, time spent converting rows, concurrent calls,
table functions with side effects, and the server's own files and paths."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import httpx
import pytest

from collector.store import Store
from tests.conftest import Server, StartServer, free_port, make_settings


@pytest.fixture(scope="module")
def bounded(start_module_server: StartServer) -> Server:
    return start_module_server(sql_max_result_bytes=1 << 20)


def post(srv: Server, sql: str, **params: object) -> httpx.Response:
    return srv.http.post("/api/v1/sql", json={"sql": sql, "params": params})


def test_a_result_over_the_byte_cap_is_413_naming_the_setting(bounded: Server) -> None:
    r = post(bounded, "SELECT repeat('x', 50000) AS s FROM range(1000)")
    assert r.status_code == 413, (r.status_code, r.text[:300])
    assert "sql_max_result_bytes" in r.json()["detail"] and str(1 << 20) in r.json()["detail"]
    # under the cap the same shape of query answers
    r = post(bounded, "SELECT repeat('x', 1000) AS s FROM range(100)")
    assert r.status_code == 200 and len(r.json()["rows"]) == 100 and r.json()["rows"][0] == ["x" * 1000]


def _sandbox_queries(db: str) -> dict[str, str]:
    return {
        "checkpoint": "SELECT * FROM checkpoint()",
        "force_checkpoint": "SELECT * FROM force_checkpoint()",
        "checkpoint_in_subquery": "SELECT (SELECT count(*) FROM checkpoint()) AS n",
        "enable_logging": "SELECT * FROM enable_logging()",
        "read_blob_db": f"SELECT size FROM read_blob('{db}')",
        "read_blob_wal": f"SELECT size FROM read_blob('{db}.wal')",
        "read_text_db": f"SELECT content FROM read_text('{db}')",
        "read_blob_param": "SELECT size FROM read_blob($p)",
        "glob_dir": f"SELECT * FROM glob('{Path(db).parent}/*')",
        "read_csv_wal": f"SELECT * FROM read_csv('{db}.wal')",
        "read_parquet": f"SELECT * FROM read_parquet('{db}')",
        "read_duckdb": f"SELECT * FROM read_duckdb('{db}')",
        "replacement_scan": f"SELECT * FROM '{db}'",
        "databases": "SELECT path FROM duckdb_databases()",
        "databases_view": "SELECT path FROM duckdb_databases",
        "database_list": "SELECT * FROM pragma_database_list",
        "settings": "SELECT value FROM duckdb_settings()",
        "pg_settings": "SELECT * FROM pg_settings",
        "current_setting": "SELECT current_setting('temp_directory')",
        "temporary_files": "SELECT * FROM duckdb_temporary_files()",
        "database_size": "SELECT * FROM pragma_database_size()",
        "query": "SELECT * FROM query('SELECT 1')",
        "query_table": "SELECT * FROM query_table('spans')",
        "memory": "SELECT * FROM duckdb_memory()",
    }


def test_table_functions_with_side_effects_and_the_servers_files_are_refused(bounded: Server) -> None:
    db = bounded.settings.db
    for name, sql in _sandbox_queries(db).items():
        r = bounded.http.post("/api/v1/sql", json={"sql": sql, "params": {"p": db} if "$p" in sql else {}})
        assert r.status_code == 400, (name, r.status_code, r.text[:300])
        assert db not in r.text and str(Path(db).parent) not in r.text, (name, r.text[:300])
    # tables, views and the catalog's names stay readable
    assert post(bounded, "SELECT count(*) FROM spans").status_code == 200
    assert post(bounded, "SELECT count(*) FROM attribution").status_code == 200
    assert post(bounded, "SELECT table_name FROM duckdb_tables() WHERE table_name = 'spans'").json()[
        "rows"
    ] == [["spans"]]
    assert post(bounded, "SELECT count(*) FROM information_schema.tables").status_code == 200
    assert post(bounded, "SELECT sum(range) FROM range(10)").json()["rows"] == [[45]]


def test_ragfault_query_on_a_file_refuses_the_same(tmp_path: Path) -> None:
    db = str(tmp_path / "q.duckdb")
    Store(db).close()
    for name in ("checkpoint", "read_blob_db", "databases", "settings"):
        sql = _sandbox_queries(db)[name]
        p = subprocess.run(
            [sys.executable, "-m", "ragfault.cli", "query", "--db", db, "--server", f"http://127.0.0.1:{free_port()}", sql],
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert p.returncode != 0, (name, p.stdout[-300:])
        assert "not available to user SQL" in p.stderr + p.stdout, (
            name,
            p.stderr[-300:],
        )
        assert db not in p.stdout


@pytest.fixture
def timed(start_server: StartServer) -> Server:
    return start_server(
        sql_timeout_seconds=60.0, sql_max_result_bytes=8 << 30, sql_row_cap=10_000_000, sql_max_concurrent=1
    )


class SteppingClock:
    """Each reading is ``step`` seconds after the last: the time spent between two readings."""

    def __init__(self, step: float) -> None:
        self.now, self.step = 0.0, step

    def __call__(self) -> float:
        self.now += self.step
        return self.now


def test_converting_and_serializing_rows_count_against_the_time_limit(timed: Server) -> None:
    # every batch of rows fetched and converted costs 18 s of the 60 s limit by the injected clock;
    # the wall-clock timer that interrupts DuckDB is 60 s too, far beyond what the query takes even on
    # a loaded machine, so only the time counted after DuckDB answered can exceed the limit
    timed.runtime.clock = SteppingClock(18.0)
    r = post(timed, "SELECT range AS a, repeat('x', 100) AS b FROM range(2000)")
    assert r.status_code == 408, (r.status_code, r.text[:200])
    assert "60 s time limit" in r.json()["detail"]
    one = post(timed, "SELECT 42")  # one batch: 54 s with serializing
    assert one.status_code == 200, (one.status_code, one.text[:200])
    assert one.json()["rows"] == [[42]]
    timed.runtime.clock = SteppingClock(0.0)
    full = post(timed, "SELECT range AS a, repeat('x', 100) AS b FROM range(2000)")
    assert full.status_code == 200, (full.status_code, full.text[:200])
    assert len(full.json()["rows"]) == 2000


def test_beyond_sql_max_concurrent_a_call_gets_429_with_retry_after(tmp_path: Path) -> None:
    timed = Server(make_settings(tmp_path, sql_timeout_seconds=5.0, sql_max_concurrent=1))
    slow = "SELECT sum(hash(a.range * b.range)) FROM range(100000000) a, range(1000) b"
    done = threading.Event()
    first: list[int] = []

    def run_slow() -> None:
        while True:  # until it is the call that runs (a probe below may hold the slot first)
            status = post(timed, slow).status_code
            if status != 429:
                break
        first.append(status)
        done.set()

    threading.Thread(target=run_slow, daemon=True).start()
    seen = None
    while not done.is_set():
        r = post(timed, "SELECT 42")
        if r.status_code == 429:
            seen = r
            break
        done.wait(0.02)
    try:
        done.wait(60)
        assert seen is not None, "no call was refused while the slow one ran"
        assert seen.headers["Retry-After"] == "1" and "sql_max_concurrent" in seen.json()["detail"]
        assert first == [408]
        assert post(timed, "SELECT 42").json()["rows"] == [[42]]  # the slot is free again
    finally:
        timed.stop()
