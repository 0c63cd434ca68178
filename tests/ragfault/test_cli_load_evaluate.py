"""`ragfault load` and `ragfault evaluate` on a database file when no server runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from collector.store import Store
from tests.conftest import Server, StartServer, make_settings
from tests.otel_helpers import http_provider
from tests.tracegen import rag_trace

ROOT = Path(__file__).resolve().parents[2]
CASE: dict[str, Any] = {"case_id": "c1", "query": "How long is the refund window?", "answerable": True,
        "evidence": [{"doc_id": "policy", "quote": "30 days"}]}  # fmt: skip


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, RAGFAULT_SERVER="http://127.0.0.1:9")  # nothing listens there
    return subprocess.run(
        [sys.executable, "-m", "ragfault.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=120,
    )


def rows(db: Path, sql: str) -> list[tuple]:
    store = Store(db, read_only=True)
    try:
        return store.con.execute(sql).fetchall()
    finally:
        store.con.close()


def test_load_refuses_a_bad_file_whole_then_evaluate_reruns_stored_traces(tmp_path: Path) -> None:
    settings = make_settings(tmp_path, settle_seconds=600)  # the server never settles it
    db = Path(settings.db)
    srv = Server(settings)
    try:
        provider = http_provider(srv.url)
        doc = {"id": "other", "content": "Shipping is free."}
        rag_trace(provider.get_tracer("t"), query=CASE["query"], answer="Refunds within 30 days.",
                  candidates=[doc], run_id="r1")  # fmt: skip
        provider.force_flush()
        srv.wait_for("SELECT count(*) FROM spans", 3)
    finally:
        srv.stop()  # stopped before settling: `evaluate` must assemble the trace itself

    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(CASE) + "\n" + json.dumps({"case_id": "c2"}) + "\n", encoding="utf-8")
    out = cli("load", "gold", str(bad), "--db", str(db))
    assert out.returncode == 1 and "line 2" in out.stderr and "query" in out.stderr
    assert rows(db, "SELECT count(*) FROM gold_cases") == [(0,)]

    good = tmp_path / "gold.jsonl"
    good.write_text(json.dumps(CASE) + "\n", encoding="utf-8")
    out = cli("load", "gold", str(good), "--db", str(db))
    assert out.returncode == 0, out.stderr
    out = cli("evaluate", "--db", str(db), "--run", "r1")
    assert out.returncode == 0, out.stderr
    assert "evaluated 1 traces" in out.stdout and "(1 assembled first)" in out.stdout
    assert rows(db, "SELECT value, status FROM evaluations WHERE metric = 'candidate_recall'") == [
        (0.0, "ok")
    ]
    assert rows(db, "SELECT root_cause FROM attribution") == [("candidate_miss",)]

    out = cli("evaluate", "--db", str(db))  # again: the old verdicts move to the history
    assert out.returncode == 0, out.stderr
    assert rows(db, "SELECT DISTINCT generation FROM evaluations") == [(2,)]
    assert rows(db, "SELECT DISTINCT generation FROM evaluation_history") == [(1,)]


def test_db_given_opens_that_file_while_a_server_answers_and_a_named_server_must_answer(
    tmp_path: Path, start_server: StartServer
) -> None:
    srv = start_server("server")
    env = dict(os.environ, RAGFAULT_SERVER=srv.url)  # a server answers where commands look first
    kb = tmp_path / "kb.jsonl"
    kb.write_text(
        json.dumps({"doc_id": "policy", "content": "Refunds within 30 days."}) + "\n", encoding="utf-8"
    )
    other = tmp_path / "other.duckdb"
    Store(other).close()

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        cmd = [sys.executable, "-m", "ragfault.cli", *args]
        return subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT, timeout=120)

    out = run("load", "kb", str(kb), "--db", str(other))
    assert out.returncode == 0, out.stderr
    assert f"into {other}" in out.stdout
    assert rows(other, "SELECT doc_id FROM kb_documents") == [("policy",)]
    assert srv.scalar("SELECT count(*) FROM kb_documents") == 0  # the server's file is untouched

    out = run("load", "kb", str(kb))  # neither given: the server that answers
    assert out.returncode == 0, out.stderr
    assert f"into the server at {srv.url}" in out.stdout
    assert srv.scalar("SELECT count(*) FROM kb_documents") == 1

    out = run("query", "SELECT 1", "--server", "http://127.0.0.1:9")  # named, nothing listens
    assert out.returncode == 2 and "no ragfault server answers at http://127.0.0.1:9" in out.stderr

    out = run("evaluate", "--db", srv.settings.db)  # the server holds that file: a hint, no traceback
    assert out.returncode == 2 and "is in use by another process" in out.stderr, out.stderr
    assert "pass --server URL" in out.stderr and "Traceback" not in out.stderr
