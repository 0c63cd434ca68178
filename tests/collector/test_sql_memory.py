"""One SQL API call cannot grow the server past the bound docs/limits.md states: DuckDB holds 2,048
rows of a query at once, so a query that builds wide values (or returns one wide value many times)
is stopped inside DuckDB, before that vector exists, not after it was copied out."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.conftest import free_ports
from tests.waiting import wait_until

MB = 1 << 20
# docs/limits.md's bound for one call beyond the server's size before it: twice sql_max_result_bytes
# (DuckDB's copy and the Arrow batches), one vector of 2,048 values of sql_max_value_bytes, and
# DuckDB's operator memory (sql_operator_memory)
RESULT, VALUE, OPERATOR = 32 * MB, 64 << 10, 256 * MB
BOUND = 2 * RESULT + 2048 * VALUE + OPERATOR


def _status(pid: int, field: str) -> int:
    """A ``kB`` field of ``/proc/PID/status`` in bytes (VmRSS now, VmHWM the peak so far)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    raise AssertionError(f"no {field} for {pid}")


def _reset_peak(pid: int) -> None:
    """Start VmHWM again from the RSS of now (``/proc/PID/clear_refs``, value 5)."""
    Path(f"/proc/{pid}/clear_refs").write_text("5")


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    tmp = tmp_path_factory.mktemp("sqlmem")
    port, grpc_port = free_ports(2)
    env = dict(os.environ, RAGFAULT_DECODE_WORKERS="0", RAGFAULT_LOG_LEVEL="warning")
    args = [sys.executable, "-m", "ragfault.cli", "serve", "--db", str(tmp / "m.duckdb"),
            "--http-port", str(port), "--grpc-port", str(grpc_port)]  # fmt: skip
    proc = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"

    def healthy() -> bool:
        assert proc.poll() is None, f"the server exited with {proc.returncode}"
        try:
            return httpx.get(url + "/healthz", timeout=2).status_code == 200
        except httpx.HTTPError:
            return False

    wait_until(healthy, what="the server to answer /healthz", timeout=120, every=0.1)
    try:
        httpx.post(url + "/api/v1/sql", json={"sql": "SELECT 1"}, timeout=60)  # load the SQL path
        yield proc, url
    finally:
        proc.terminate()
        proc.wait(60)


BOMBS = {
    # one constant value, copied once per row when the rows leave the query
    "constant": "SELECT repeat('x', 1000000) AS s FROM range(2500)",
    # a value built per row: 2,048 distinct 1 MB strings in one vector
    "per_row": "SELECT repeat('x', 1000000 + (range % 2)::INT) AS s FROM range(2500)",
    # values under sql_max_value_bytes, shared by every row of a join
    "joined": "WITH w AS (SELECT repeat('x', 60000) AS s) SELECT s FROM w, range(100000)",
    # a list built per row
    "lists": "SELECT range(range, range + 1000000) AS l FROM range(2500)",
    # one value doubled by concatenation, thirty times: 1 GiB
    "doubled": "WITH RECURSIVE t(s, n) AS (SELECT 'x', 0 UNION ALL SELECT s || s, n + 1 FROM t WHERE n < 30) "
    "SELECT length(s) AS l FROM t",
}


@pytest.mark.parametrize("name", list(BOMBS))
def test_a_result_bomb_is_413_within_the_documented_bound(
    served: tuple[subprocess.Popen[bytes], str], name: str
) -> None:
    proc, url = served
    _reset_peak(proc.pid)
    before = _status(proc.pid, "VmRSS")
    r = httpx.post(url + "/api/v1/sql", json={"sql": BOMBS[name]}, timeout=120)
    grown = _status(proc.pid, "VmHWM") - before
    assert r.status_code == 413, (r.status_code, r.text[:300])
    assert "sql_max_value_bytes" in r.text or "sql_max_result_bytes" in r.text
    assert grown < BOUND, f"{name}: the server grew by {grown / MB:.0f} MB (bound {BOUND / MB:.0f} MB)"
    assert proc.poll() is None
    # the server answers, and a query under the bounds returns its rows
    r = httpx.post(url + "/api/v1/sql", json={"sql": "SELECT repeat('ab', 3) AS s FROM range(3)"}, timeout=60)
    assert r.json()["rows"] == [["ababab"]] * 3


SAME = [
    "SELECT 1 AS a, {'x': [1], 'y z': 's'} AS s, map([1], ['a']) AS m, ['a', NULL]::VARCHAR[2] AS ar,"
    " '{}'::JSON AS j, '\\x00'::BLOB AS b, '101'::BIT AS bt, union_value(k := 1) AS u,"
    " 1.5::DECIMAL(4,1) AS d, [[[[[['deep']]]]]] AS dd, NULL AS n, INTERVAL 1 day AS iv, 1::HUGEINT AS h",
    "SELECT 1 AS a, 2 AS a; -- a comment after the statement",
    "SELECT range AS i, repeat('ab', 3) AS r, lpad('a', 3, '-') AS p, range(2, 8, 2) AS g,"
    " list_resize([1], 3) AS lr FROM range(5) ORDER BY i DESC",
    "WITH t AS (SELECT range % 3 AS k, range AS v FROM range(1000)) "
    "SELECT k, sum(v) AS s, list(v ORDER BY v)[1:3] AS first FROM t GROUP BY k ORDER BY k",
    "SELECT v, row_number() OVER (ORDER BY v DESC) AS rn FROM (VALUES (3), (1), (2)) AS t(v) ORDER BY rn",
    "SELECT $x::INT + 1 AS y UNION ALL SELECT 7 ORDER BY 1",
    "SELECT * FROM range(3000) ORDER BY range DESC",
    "SELECT 'a' || range::VARCHAR || 'b' AS s, concat('x', NULL, upper('y' || 'z')) AS c, [1] || [range] AS l,"
    " concat_ws('-', 'p', 'q') AS w, list_reduce(['a', 'b'], lambda x, y: x || y) AS r FROM range(3)",
    "WITH RECURSIVE t(s, n) AS (SELECT 'x', 0 UNION ALL SELECT s || s, n + 1 FROM t WHERE n < 12) "
    "SELECT n, length(s) AS l FROM t ORDER BY n",
]


def test_the_rewrite_returns_what_the_query_returns(tmp_path: Path) -> None:
    import duckdb

    from collector.store.reader import run_select

    con = duckdb.connect(str(tmp_path / "same.duckdb"))
    try:
        for sql in SAME:
            params = {"x": 41} if "$x" in sql else {}
            plain = run_select(con.cursor(), sql, params, row_cap=2000)
            bounded = run_select(
                con.cursor(), sql, params, row_cap=2000, max_bytes=RESULT, max_value_bytes=VALUE, user=True
            )
            assert bounded.as_dict() == plain.as_dict(), sql
            assert plain.rows, sql
    finally:
        con.close()


def test_joining_a_little_to_a_wide_stored_value_is_not_refused(tmp_path: Path) -> None:
    """What a join of values adds is checked, not what it returns: a stored value wider than
    ``sql_max_value_bytes`` (an attribute of a large span) may still have a little joined to it."""
    import duckdb

    from collector.store.reader import run_select

    con = duckdb.connect(str(tmp_path / "wide.duckdb"))
    try:
        con.execute("CREATE TABLE w AS SELECT repeat('x', 1000000) AS v")
        sql = "SELECT length(v || '!') AS a, length(concat('<', v, '>')) AS b FROM w"
        bounded = run_select(
            con.cursor(), sql, {}, row_cap=10, max_bytes=RESULT, max_value_bytes=VALUE, user=True
        )
        assert bounded.as_dict()["rows"] == [[1000001, 1000002]]
        with pytest.raises(Exception, match="sql_max_value_bytes"):
            run_select(con.cursor(), "SELECT length(v || v) FROM w", {}, row_cap=10, max_bytes=RESULT,
                       max_value_bytes=VALUE, user=True)  # fmt: skip
    finally:
        con.close()
