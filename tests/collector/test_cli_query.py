"""``ragfault query``: through a running server, or read-only on the file when none runs."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from ragfault.cli import main
from tests.collector.otlp_build import new_trace_id, request, span
from tests.conftest import Server, StartServer, free_port, make_settings

QUERY = "SELECT name, (attributes->>'$.n')::INT AS n FROM spans WHERE service_name = 'cli-app' ORDER BY n"


def seed(srv: Server) -> None:
    tid = new_trace_id()
    body = request([span(tid, name=f"span-{i}", attrs={"n": i}) for i in range(3)], service="cli-app")
    r = srv.http.post(
        "/v1/traces", content=body.SerializeToString(), headers={"Content-Type": "application/x-protobuf"}
    )
    assert r.status_code == 200


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_query_through_the_server(server: Server, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                  monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    seed(server)
    nowhere = str(tmp_path / "not-this-file.duckdb")  # proves the answer came from the server

    code, out, _ = run(capsys, "query", QUERY, "--server", server.url, "--db", nowhere, "--format", "json")
    assert code == 0
    assert json.loads(out) == [
        {"name": "span-0", "n": 0},
        {"name": "span-1", "n": 1},
        {"name": "span-2", "n": 2},
    ]

    sql_file = tmp_path / "names.sql"
    sql_file.write_text("-- name: names\n" + QUERY + "\n")
    monkeypatch.setenv("RAGFAULT_SERVER", server.url)
    code, out, _ = run(capsys, "query", str(sql_file), "--format", "csv")
    assert code == 0
    assert "\r" not in out and out.count("\n") == 4  # lines end with the platform's newline
    assert list(csv.reader(io.StringIO(out))) == [
        ["name", "n"],
        ["span-0", "0"],
        ["span-1", "1"],
        ["span-2", "2"],
    ]

    code, out, _ = run(capsys, "query", QUERY)
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split() == ["name", "n"] and set(lines[1]) <= {"-", " "}
    assert lines[2].split() == ["span-0", "0"] and lines[-1] == "(3 rows)"

    code, _, err = run(capsys, "query", "DROP TABLE spans")
    assert code == 1 and "SELECT" in err
    assert server.scalar("SELECT count(*) FROM spans") == 3

    code, _, err = run(capsys, "query", QUERY, "--db", nowhere)  # a file named: that file, not the server
    assert code == 2 and "not-this-file.duckdb" in err


def test_query_opens_the_file_read_only_when_no_server_runs(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    start_server: StartServer,
) -> None:
    settings = make_settings(tmp_path)
    srv = Server(settings)
    seed(srv)
    srv.stop()  # DuckDB allows one writing process: the server has to be gone
    db = settings.db
    monkeypatch.setenv("RAGFAULT_SERVER", f"http://127.0.0.1:{free_port()}")  # nobody listens there

    code, out, _ = run(capsys, "query", QUERY, "--db", db, "--format", "json")
    assert code == 0, out
    assert [r["n"] for r in json.loads(out)] == [0, 1, 2]

    sql_file = tmp_path / "q.sql"
    sql_file.write_text(QUERY)
    code, out, _ = run(capsys, "query", str(sql_file), "--db", db, "--format", "csv")
    assert code == 0 and out.splitlines()[1] == "span-0,0"

    code, _, err = run(capsys, "query", "DELETE FROM spans", "--db", db)
    assert code == 1 and err
    code, _, err = run(capsys, "query", "SELECT * FROM read_csv('/etc/passwd')", "--db", db)
    assert code == 1 and err
    code, _, err = run(capsys, "query", "SELECT 1", "--db", str(tmp_path / "missing.duckdb"))
    assert code == 2 and "missing.duckdb" in err

    # The file was opened read-only: a server can take it over again and nothing was deleted.
    srv = start_server(db=db)
    assert srv.scalar("SELECT count(*) FROM spans") == 3


def test_query_command_line_in_a_subprocess(server: Server) -> None:
    seed(server)
    out = subprocess.run(
        [sys.executable, "-m", "ragfault.cli", "query", "SELECT count(*) AS n FROM spans",
         "--server", server.url, "-f", "json"],  # fmt: skip
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == [{"n": 3}]
