"""Deep-search agents through a real server: a search lists titles, snippets and ids; the agent
opens some results. Evidence surfaced but never opened is ``not_opened``, not ``candidate_miss``."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from tests.attribution.conftest import serve, wait_evaluated
from tests.attribution.data import CONTENT, EN_OK, GOLD, KB, QUERY, jsonl
from tests.conftest import Server
from tests.otel_helpers import http_provider
from tests.tracegen import search_agent_trace

CASE = "en-retry"  # evidence: retry-v2, quote "Wait 30 seconds before retrying"


def url(doc_id: str) -> str:
    return f"https://kb.example.com/docs/{doc_id}"


RESULTS = [
    {
        "id": "export-v2",
        "url": url("export-v2"),
        "title": "Exporting logs",
        "snippet": "Logs can be exported…",
    },
    {
        "id": "retry-v2",
        "url": url("retry-v2"),
        "title": "Error R-17",
        "snippet": "Error R-17 means rate limiting…",
    },
    {"id": "sso-setup", "url": url("sso-setup"), "title": "Single sign-on", "snippet": "SAML 2.0 and OIDC…"},
]
NOT_FOUND = "I could not find how long to wait."

# name: (convention, opened (doc id, by), answer, expected root cause)
SCENARIOS: dict[str, tuple[str, list[tuple[str, str]], str, str]] = {
    "oi-never-opened": ("openinference", [("export-v2", "url")], NOT_FOUND, "not_opened"),
    "oi-opened": ("openinference", [("export-v2", "url"), ("retry-v2", "url")], EN_OK, "ok"),
    "genai-never-opened": ("genai", [], NOT_FOUND, "not_opened"),
    "genai-opened-by-id": ("genai", [("retry-v2", "id")], EN_OK, "ok"),
}


@pytest.fixture(scope="module")
def traced(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, dict[str, str]]]:
    for srv in serve(tmp_path_factory.mktemp("search-agent")):
        assert srv.http.post("/api/v1/kb", content=jsonl(KB)).json()["loaded"] == len(KB)
        assert srv.http.post("/api/v1/gold", content=jsonl(GOLD)).json()["loaded"] == len(GOLD)
        provider = http_provider(srv.url, batch=True)
        tracer = provider.get_tracer("search-agent")
        ids = {}
        for name, (convention, opened, answer, _) in SCENARIOS.items():
            ids[name] = search_agent_trace(
                tracer,
                query=QUERY[CASE],
                answer=answer,
                results=RESULTS,
                opened=[(url(d) if by == "url" else d, CONTENT[d]) for d, by in opened],
                case_id=CASE,
                convention=convention,
                open_by=opened[0][1] if opened else "url",
            )
        provider.shutdown()
        wait_evaluated(srv, list(ids.values()))
        yield srv, ids


def stages(server: Server, trace_id: str) -> dict[str, list[tuple[Any, ...]]]:
    rows = server.sql(
        "SELECT d.stage, d.doc_id, s.tool_name, d.content, d.source FROM step_documents d "
        "JOIN steps s USING (trace_id, span_id) WHERE d.trace_id = $t ORDER BY d.stage, d.span_id, d.position",
        t=trace_id,
    )
    out: dict[str, list[tuple[Any, ...]]] = {}
    for stage, doc_id, tool, content, source in rows:
        out.setdefault(stage, []).append((doc_id, tool, content, source))
    return out


@pytest.mark.parametrize("name", tuple(SCENARIOS))
def test_root_cause(traced: tuple[Server, dict[str, str]], name: str) -> None:
    server, ids = traced
    expected = SCENARIOS[name][3]
    root, layers, evidence = server.sql(
        "SELECT root_cause, failing_layers, evidence FROM attribution WHERE trace_id = $t", t=ids[name]
    )[0]
    assert root == expected, (layers, evidence)
    assert "candidate_miss" not in layers
    if expected == "not_opened":
        ev = json.loads(evidence)["not_opened"]["not_opened"]
        assert [(u["label"], u["rank"]) for u in ev] == [("retry-v2", 2)]
    else:
        assert layers == []


def test_surfaced_and_opened_stages(traced: tuple[Server, dict[str, str]]) -> None:
    server, ids = traced
    got = stages(server, ids["oi-never-opened"])
    assert [(d, tool, content) for d, tool, content, _ in got["surfaced"]] == [
        ("export-v2", "web_search", None),
        ("retry-v2", "web_search", None),
        ("sso-setup", "web_search", None),
    ]
    assert [(d, tool, content) for d, tool, content, _ in got["opened"]] == [
        ("export-v2", "fetch", CONTENT["export-v2"])
    ]
    assert "candidate" not in got  # a list of results is no list of retrieved documents
    assert [d for d, *_ in got["context"]] == ["export-v2"]  # the opened text reached the prompt
    assert {src for rows in got.values() for *_, src in rows} == {"derived"}

    got = stages(server, ids["genai-opened-by-id"])
    assert [d for d, *_ in got["opened"]] == ["retry-v2"] and [d for d, *_ in got["context"]] == ["retry-v2"]
    assert stages(server, ids["genai-never-opened"]).get("opened") is None


def test_metrics(traced: tuple[Server, dict[str, str]]) -> None:
    """evidence_opened: units opened / units surfaced; candidate_recall counts only what was opened
    and does not fail for what was only surfaced."""
    server, ids = traced

    def metric(name: str, trace: str) -> tuple[Any, ...]:
        return tuple(
            server.sql(
                "SELECT status, value, numerator, denominator, passed FROM evaluations "
                "WHERE trace_id = $t AND metric = $m AND span_id IS NULL",
                t=ids[trace],
                m=name,
            )[0]
        )

    assert metric("evidence_opened", "oi-never-opened") == ("ok", 0.0, 0, 1, False)
    assert metric("evidence_opened", "oi-opened") == ("ok", 1.0, 1, 1, True)
    assert metric("candidate_recall", "oi-never-opened") == ("ok", 0.0, 0, 1, True)
    assert metric("candidate_recall", "oi-opened") == ("ok", 1.0, 1, 1, True)
