"""Fixtures for the framework tests: one ragfault server per module with the scenario's knowledge base
and gold cases loaded through the API, the local chat server, and ``run_app`` which runs an app script
inside its group's virtual environment, exporting to the server with the real OTLP/HTTP exporter."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Server, StartServer
from tests.frameworks import envs
from tests.frameworks.apps import scenario
from tests.frameworks.chat_server import ChatServer
from tests.waiting import wait_equal

APPS = Path(__file__).resolve().parent / "apps"


def jsonl(rows: list[dict[str, Any]]) -> bytes:
    return "\n".join(json.dumps(r) for r in rows).encode()


@pytest.fixture(scope="module")
def chat() -> Iterator[ChatServer]:
    srv = ChatServer().start()
    try:
        yield srv
    finally:
        srv.stop()


def _scenario_server(start_module_server: StartServer, store: str = "") -> Server:
    srv = start_module_server(store)
    assert srv.http.post("/api/v1/kb", content=jsonl(scenario.KB)).json()["loaded"] == len(scenario.KB)
    assert srv.http.post("/api/v1/gold", content=jsonl(scenario.CASES)).json()["loaded"] == len(
        scenario.CASES
    )
    return srv


# the convention-blind twin of each module's server, by the server's url (``renamed``)
TWINS: dict[str, Server] = {}


@pytest.fixture(scope="module")
def rf(start_module_server: StartServer) -> Iterator[Server]:
    """A server with the scenario's knowledge base and gold cases, and its convention-blind twin (the
    same, for the renamed spans ``expect.check_all`` sends it: ``tests.frameworks.renamed``)."""
    srv = _scenario_server(start_module_server)
    TWINS[srv.url] = _scenario_server(start_module_server, "twin")
    try:
        yield srv
    finally:
        TWINS.pop(srv.url, None)


@dataclass
class Run:
    """One app run: the trace id of each question, and the server holding them (settled, evaluated)."""

    server: Server
    trace_ids: dict[str, str]

    def rows(self, sql: str, **params: Any) -> list[dict[str, Any]]:
        r = self.server.http.post("/api/v1/sql", json={"sql": sql, "params": params})
        assert r.status_code == 200, r.text
        body = r.json()
        return [dict(zip(body["columns"], row, strict=True)) for row in body["rows"]]

    def trace(self, key: str) -> dict[str, Any]:
        (row,) = self.rows(
            "SELECT trace_id, query_text, answer_text, case_id FROM traces WHERE trace_id = $t",
            t=self.trace_ids[key],
        )
        return row

    def steps(self, key: str) -> list[dict[str, Any]]:
        return self.rows(
            "SELECT span_id, parent_span_id, step_type, convention, name, model, query_text, input_text, "
            "output_text, tool_name, case_id, run_id, session_id, user_id, input_tokens, output_tokens FROM steps "
            "WHERE trace_id = $t ORDER BY start_time, span_id",
            t=self.trace_ids[key],
        )

    def doc_ids(self, key: str, stage: str) -> list[str | None]:
        """The doc ids at ``stage`` (the derived context included), in position order, per span."""
        rows = self.rows(
            "SELECT span_id, doc_id FROM step_documents WHERE trace_id = $t AND stage = $s "
            "ORDER BY span_id, position",
            t=self.trace_ids[key],
            s=stage,
        )
        return [r["doc_id"] for r in rows]

    def root_cause(self, key: str) -> tuple[str | None, str | None]:
        """(root cause, case id) of the question's trace; (None, None) when it joined no gold case."""
        rows = self.rows(
            "SELECT root_cause, case_id FROM attribution WHERE trace_id = $t", t=self.trace_ids[key]
        )
        return (rows[0]["root_cause"], rows[0]["case_id"]) if rows else (None, None)


def run_app(
    server: Server,
    chat: ChatServer,
    app: str,
    *args: str,
    group: str = "main",
    env: dict[str, str] | None = None,
    timeout: float = 300,
) -> Run:
    """Run ``apps/<app>.py`` in ``group``'s environment; wait until its traces are evaluated."""
    python, _ = envs.ensure(group)
    full_env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "TRACELOOP_", "OPENAI_"))}
    full_env.update(
        RAGFAULT_TEST_OTLP=f"{server.url}/v1/traces",
        RAGFAULT_TEST_CHAT_URL=chat.url,
        OPENAI_API_KEY="local",
        OPENAI_BASE_URL=chat.url,
        PYTHONPATH="",
        NO_PROXY="127.0.0.1,localhost",
    )
    full_env.update(env or {})
    done = subprocess.run(
        [str(python), str(APPS / f"{app}.py"), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=full_env,
        cwd=str(APPS),
    )
    return finished(server, done, app)


def finished(server: Server, done: subprocess.CompletedProcess[str], app: str) -> Run:
    """The run of an app that exited (Python or Node): it succeeded, printed the trace id of each
    question as its last JSON line, and those traces are evaluated."""
    assert done.returncode == 0, f"{app} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}"
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith("{")]
    assert lines, f"{app} printed no trace ids:\n{done.stdout}\n{done.stderr}"
    ids: dict[str, str] = json.loads(lines[-1])
    assert set(ids) == set(scenario.QUESTIONS), ids
    wait_evaluated(server, list(ids.values()))
    return Run(server, ids)


def wait_evaluated(server: Server, trace_ids: list[str], timeout: float = 60) -> None:
    """Assemble now, then wait until every trace is evaluated (the apps flushed before exiting)."""

    def evaluated() -> int:
        server.settle()
        n: int = server.scalar(
            "SELECT count(*) FROM traces WHERE evaluated_at IS NOT NULL AND list_contains($ids, trace_id)",
            ids=trace_ids,
        )
        return n

    wait_equal(evaluated, len(trace_ids), what="the traces evaluated", timeout=timeout)


def dump(run: Run, key: str) -> str:
    """Everything about one trace, for assertion messages."""
    lines = [str(run.trace(key))]
    lines += [str(s) for s in run.steps(key)]
    lines += [
        str(r)
        for r in run.rows(
            "SELECT span_id, stage, position, doc_id, chunk_id, source FROM step_documents WHERE trace_id = $t "
            "ORDER BY span_id, stage, position",
            t=run.trace_ids[key],
        )
    ]
    lines += [
        str(r)
        for r in run.rows(
            "SELECT metric, status, value, label FROM evaluations WHERE trace_id = $t AND span_id IS NULL "
            "ORDER BY metric",
            t=run.trace_ids[key],
        )
    ]
    return "\n".join(lines)
