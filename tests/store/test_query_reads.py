"""The store's reads that take a query function (``base.QueryFn``) instead of a cursor: the CLI runs
them through the server's SQL API or on a file opened read-only, the server on its own cursor
(``reader.cursor_query``). Their statements, header comments included, must pass the SQL API's guard
and answer there exactly what they answer on a cursor; and what they answer is checked against the
traces, cases and documents a real server was sent."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb
import pytest

from collector.store import promote, references, report, verdicts
from collector.store.base import QueryFn
from collector.store.reader import cursor_query
from collector.store.schema import holds_ragfault
from ragfault.client import open_read_only, sql
from ragfault_core.errors import ConfigError
from tests.conftest import Server
from tests.otel_helpers import http_provider
from tests.tracegen import rag_trace

DOC = {"id": "policy", "content": "Refunds are accepted within 30 days of purchase.", "score": 0.9}
KB = {"doc_id": "policy", "title": "Refund policy", "content": DOC["content"]}
CASES: list[dict[str, Any]] = [
    {"case_id": "refund", "query": "How long do refunds take?", "category": "billing",
     "evidence": [{"doc_id": "policy", "quote": "within 30 days"}]},
    {"case_id": "shoes", "query": "Can I return shoes?", "category": "returns"},
]  # fmt: skip


def _ndjson(rows: list[dict[str, Any]]) -> bytes:
    return b"".join(json.dumps(r).encode() + b"\n" for r in rows)


def _send(server: Server) -> dict[str, str]:
    """Two traces of run r1 (one per gold case), one of run r2 with no case; their ids by name."""
    provider = http_provider(server.url, service="reads-app")
    tracer = provider.get_tracer("reads")
    ids = {
        "refund": rag_trace(tracer, query=CASES[0]["query"], answer="Within 30 days.", candidates=[DOC],
                            case_id="refund", run_id="r1"),
        "shoes": rag_trace(tracer, query=CASES[1]["query"], answer="Yes, any time.", candidates=[DOC],
                           case_id="shoes", run_id="r1"),
        "live": rag_trace(tracer, query="Do you ship abroad?", answer="Yes.", candidates=[DOC], run_id="r2"),
    }  # fmt: skip
    provider.shutdown()
    return ids


def test_the_query_reads_answer_alike_through_the_sql_api_and_on_a_cursor(server: Server) -> None:
    assert server.http.post("/api/v1/kb", content=_ndjson([KB])).status_code == 200
    changed = {**KB, "content": "Refunds are accepted within 45 days of purchase.", "version": "2"}
    assert server.http.post("/api/v1/kb", content=_ndjson([changed])).status_code == 200
    r = server.http.post("/api/v1/gold", params={"dataset": "reads"}, content=_ndjson(CASES))
    assert r.status_code == 200, r.text
    ids = _send(server)
    server.wait_for("SELECT count(DISTINCT trace_id) FROM spans", 3)
    server.settle()
    server.wait_for("SELECT count(*) FROM traces WHERE evaluated_at IS NOT NULL", 3, timeout=60)

    def api(statement: str, params: dict[str, Any]) -> dict[str, Any]:
        return sql(statement, params, server=server.url)

    reads: dict[str, Callable[[QueryFn], Any]] = {
        "settled_ids r1": lambda run: verdicts.settled_ids(run, "r1", None, None),
        "settled_ids none before 2000": lambda run: verdicts.settled_ids(
            run, None, None, "2000-01-01T00:00:00"
        ),
        "progress": verdicts.progress,
        "changes": lambda run: references.changes_since(run, None),
        "changes since 2100": lambda run: references.changes_since(run, "2100-01-01T00:00:00"),
        "runs": report.runs,
        "datasets": report.datasets,
        "cases r1": lambda run: report.cases(run, "r1", "reads", None, None)["rows"],
        "case_causes r1": lambda run: report.case_causes(run, "r1"),
        "suggested_cause": lambda run: promote.suggested_cause(run, ids["live"]),
        "promoted": lambda run: promote.promoted(run, None),
    }
    con = server.runtime.store.cursor()
    try:
        on_cursor = {name: read(cursor_query(con)) for name, read in reads.items()}
        assert holds_ragfault(con)
    finally:
        con.close()
    through_api = {name: read(api) for name, read in reads.items()}
    assert through_api == on_cursor

    got = on_cursor
    assert sorted(got["settled_ids r1"]) == sorted([ids["refund"], ids["shoes"]])
    assert got["settled_ids none before 2000"] == []
    assert got["progress"] == (3, 3)
    assert [(c["doc_id"], c["change"], c["new_version"]) for c in got["changes"]] == [
        ("policy", "content,version", "2")
    ]
    assert got["changes since 2100"] == []
    assert got["runs"] == {"r1": 2, "r2": 1} and list(got["runs"]) == ["r2", "r1"]  # the latest run first
    assert got["datasets"] == {"reads": 2}
    assert sorted(row[0] for row in got["cases r1"]) == ["refund", "shoes"]
    assert set(got["case_causes r1"]) == {"refund", "shoes"}
    assert {row[0]: row[2] for row in got["cases r1"]} == got["case_causes r1"]
    assert got["promoted"] == []  # nothing promoted yet


def test_a_duckdb_file_ragfault_did_not_make_is_refused(tmp_path: Path) -> None:
    other = tmp_path / "other.duckdb"
    con = duckdb.connect(str(other))
    try:
        con.execute("CREATE TABLE t (x INTEGER)")
        assert not holds_ragfault(con)
    finally:
        con.close()
    with pytest.raises(ConfigError, match="is a DuckDB database but not a ragfault one"):
        open_read_only(str(other))
