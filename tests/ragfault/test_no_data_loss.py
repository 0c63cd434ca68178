"""No command writes over data it did not make: every command that writes a database refuses, in
one line, a file a running ``ragfault serve`` holds, a file that is not a DuckDB database and
another application's DuckDB database; ``demo`` writes a fresh file and replaces only its own with
``--force``. Everything here runs the real command line against real servers and real files."""

from __future__ import annotations

import hashlib
import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from tests.ragfault.clirun import cli
from tests.served import Collector


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def one_line_refusal(out: subprocess.CompletedProcess[str], *needles: str) -> str:
    """The refusal's one line, after checking it is one and says each of ``needles``."""
    assert out.returncode != 0, out.stdout + out.stderr
    assert "Traceback" not in out.stderr, out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ragfault: "), out.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


def rows(db: Path, sql: str) -> list[tuple[object, ...]]:
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute(sql).fetchall()


def other_app_db(path: Path) -> Path:
    """Another application's DuckDB database."""
    with duckdb.connect(str(path)) as con:
        con.execute("CREATE TABLE invoices (id INTEGER, total DOUBLE); INSERT INTO invoices VALUES (1, 9.5)")
    return path


def test_demo_never_replaces_the_database_a_running_server_holds(tmp_path: Path) -> None:
    db = tmp_path / "ragfault-demo.duckdb"
    assert cli(tmp_path, "demo", "--db", db.name).returncode == 0
    extra = tmp_path / "mine.jsonl"
    extra.write_text(json.dumps({"case_id": "mine-1", "query": "What is mine?"}) + "\n", encoding="utf-8")
    with Collector(["--db", str(db)], tmp_path / "serve.log", cwd=tmp_path) as server:
        server.wait_ready()
        assert f"web UI at http://127.0.0.1:{server.port}/ui" in server.log.read_text()  # the startup log
        traces = server.sql("SELECT count(*) FROM traces")[0][0]
        assert traces == 20
        inode = db.stat().st_ino
        for argv in (["demo", "--db", db.name, "--force"], ["demo", "--db", db.name]):
            out = cli(tmp_path, *argv)
            one_line_refusal(out, f"{db.name} is in use by another process (PID {server.proc.pid})", "--db")
        # the same file, with everything in it, still served
        assert db.stat().st_ino == inode
        assert server.sql("SELECT count(*) FROM traces")[0][0] == traces
        assert server.sql("SELECT count(*) FROM gold_cases")[0][0] == 17
        # the user adds data of their own through the server ...
        out = cli(tmp_path, "load", "gold", extra.name, "--server", server.url)
        assert out.returncode == 0, out.stderr
    # ... so, server stopped, the demo still does not replace the file: it holds more than the demo sent
    before = digest(db)
    out = cli(tmp_path, "demo", "--db", db.name, "--force")
    one_line_refusal(out, "holds data the demo did not send", "gold cases of dataset mine.jsonl")
    assert digest(db) == before
    assert rows(db, "SELECT count(*) FROM gold_cases") == [(18,)]


def test_demo_replaces_only_its_own_database_and_only_with_force(tmp_path: Path) -> None:
    db = tmp_path / "demo.duckdb"
    assert cli(tmp_path, "demo", "--db", db.name).returncode == 0
    first = {r[0] for r in rows(db, "SELECT trace_id FROM traces")}
    assert len(first) == 20 and rows(db, "SELECT count(*) FROM ragfault_demo") == [(1,)]

    before = digest(db)
    one_line_refusal(cli(tmp_path, "demo", "--db", db.name), "holds an earlier demo", "--force")
    assert digest(db) == before

    out = cli(tmp_path, "demo", "--db", db.name, "--force")
    assert out.returncode == 0, out.stdout + out.stderr
    second = {r[0] for r in rows(db, "SELECT trace_id FROM traces")}
    assert len(second) == 20 and not first & second  # a fresh run, not the old rows kept


@pytest.fixture
def foreign_files(tmp_path: Path) -> dict[str, Path]:
    """Files no ragfault command may write into: a text file, a JSON lines file, an empty file,
    another application's DuckDB database."""
    notes = tmp_path / "notes.txt"
    notes.write_text("call the bank on monday\n", encoding="utf-8")
    jsonl = tmp_path / "traces.jsonl"
    jsonl.write_text(json.dumps({"trace_id": "t"}) + "\n", encoding="utf-8")
    empty = tmp_path / "empty.duckdb"
    empty.touch()
    return {"notes": notes, "jsonl": jsonl, "empty": empty, "app": other_app_db(tmp_path / "app.duckdb")}


def test_demo_never_writes_over_another_file(tmp_path: Path, foreign_files: dict[str, Path]) -> None:
    from collector.store import Store

    made_by_serve = tmp_path / "ragfault.duckdb"
    Store(made_by_serve).close()  # what `ragfault serve` leaves: a ragfault database, not a demo's
    for path in [*foreign_files.values(), made_by_serve]:
        before = digest(path)
        for argv in (["demo", "--db", path.name], ["demo", "--db", path.name, "--force"]):
            one_line_refusal(cli(tmp_path, *argv), path.name)
        assert digest(path) == before
        assert not Path(f"{path}.wal").exists()
    stray = tmp_path / "fresh.duckdb.wal"  # a log without its database is not started on
    stray.write_bytes(b"x")
    one_line_refusal(cli(tmp_path, "demo", "--db", "fresh.duckdb", "--force"), "fresh.duckdb.wal")
    assert not (tmp_path / "fresh.duckdb").exists() and stray.read_bytes() == b"x"


@pytest.fixture(scope="module")
def held(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Collector, Path]]:
    """A running ``ragfault serve`` and the database file it holds."""
    where = tmp_path_factory.mktemp("held")
    with Collector(["--db", "held.duckdb"], where / "serve.log", cwd=where) as server:
        server.wait_ready()
        yield server, where / "held.duckdb"


def test_serve_refuses_a_held_file_and_files_that_are_not_its_own(
    tmp_path: Path, held: tuple[Collector, Path], foreign_files: dict[str, Path]
) -> None:
    server, db = held
    ports = ["--http-port", "0", "--grpc-port", "0"]
    out = cli(tmp_path, "serve", "--db", str(db), *ports)
    one_line_refusal(out, f"is in use by another process (PID {server.proc.pid})")
    assert server.sql("SELECT 1") == [[1]]  # the first server is unaffected
    for path in foreign_files.values():
        before = digest(path)
        one_line_refusal(cli(tmp_path, "serve", "--db", path.name, *ports), path.name, "--db")
        assert digest(path) == before
    assert rows(foreign_files["app"], "SELECT table_name FROM duckdb_tables()") == [("invoices",)]


def _labels(tmp_path: Path) -> Path:
    path = tmp_path / "labels.jsonl"
    row = {"trace_id": "t1", "metric": "judge_answer_support", "label": "supported", "annotator": "ana"}
    path.write_text(json.dumps(row) + "\n", encoding="utf-8")
    return path


def _gold(tmp_path: Path) -> Path:
    path = tmp_path / "gold.jsonl"
    path.write_text(json.dumps({"case_id": "c1", "query": "How long?"}) + "\n", encoding="utf-8")
    return path


def _kb(tmp_path: Path) -> Path:
    path = tmp_path / "kb.jsonl"
    path.write_text(json.dumps({"doc_id": "d1", "content": "Thirty days."}) + "\n", encoding="utf-8")
    return path


# every command that writes a database file, as (name, the arguments before --db)
WRITERS = {
    "load-gold": lambda tmp: ["load", "gold", str(_gold(tmp))],
    "load-kb": lambda tmp: ["load", "kb", str(_kb(tmp))],
    "evaluate": lambda tmp: ["evaluate"],
    "label": lambda tmp: ["label", "import", str(_labels(tmp))],
    "judge": lambda tmp: ["judge", "calibrate", "--accept"],
    "export-delete": lambda tmp: ["export", str(tmp / "out"), "--delete-after"],
}


@pytest.mark.parametrize("command", sorted(WRITERS))
def test_a_writing_command_refuses_a_held_file_and_files_that_are_not_its_own(
    command: str, tmp_path: Path, held: tuple[Collector, Path], foreign_files: dict[str, Path]
) -> None:
    argv = WRITERS[command](tmp_path)
    server, db = held
    out = cli(tmp_path, *argv, "--db", str(db))
    one_line_refusal(out, f"is in use by another process (PID {server.proc.pid})", "--server URL")
    for name, path in foreign_files.items():
        before = digest(path)
        line = one_line_refusal(cli(tmp_path, *argv, "--db", path.name), path.name)
        assert ("not a DuckDB database" if name != "app" else "tables: invoices") in line
        assert digest(path) == before and not Path(f"{path}.wal").exists()
    assert not (tmp_path / "out").exists()  # nothing exported from a refused file


def test_kb_conflicts_never_replaces_its_inputs_or_files_it_did_not_write(tmp_path: Path) -> None:
    from ragfault.demo import scenarios

    demo = Path(scenarios.__file__).parent
    kb, gold = tmp_path / "kb.jsonl", tmp_path / "gold.jsonl"
    kb.write_bytes((demo / "kb.jsonl").read_bytes())
    gold.write_bytes((demo / "gold.jsonl").read_bytes())
    before = digest(kb), digest(gold)
    argv = ["kb", "conflicts", "--kb", "kb.jsonl", "--gold", "gold.jsonl"]
    one_line_refusal(cli(tmp_path, *argv, "--out", "."), "would replace the input", "--out")
    assert (digest(kb), digest(gold)) == before and not (tmp_path / "manifest.jsonl").exists()

    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "gold.jsonl").write_text("my own cases\n", encoding="utf-8")
    one_line_refusal(cli(tmp_path, *argv, "--out", "mine"), "not written by `kb conflicts`")
    assert (mine / "gold.jsonl").read_text(encoding="utf-8") == "my own cases\n"

    for _ in range(2):  # its own output it writes again
        out = cli(tmp_path, *argv, "--out", "out")
        assert out.returncode == 0, out.stderr
    assert (tmp_path / "out" / "manifest.jsonl").stat().st_size > 0
