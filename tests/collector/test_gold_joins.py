"""``ragfault doctor`` says why traces joined no gold case: a real server, real OTLP exports, gold
cases loaded; a trace naming its case, one asking a case's question, one recording the whole task
prompt that holds a case's question, one recording no question, one asking what no case asks."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator

import pytest

from collector.api.gold_joins import FIX_INSIDE, FIX_NONE
from tests.attribution.conftest import serve, wait_evaluated
from tests.conftest import Server
from tests.otel_helpers import http_provider

QUESTION = "How long is the refund window for hardware?"
GOLD = {"case_id": "refund", "query": QUESTION, "evidence": [{"doc_id": "policy", "quote": "30 days"}]}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    for srv in serve(tmp_path_factory.mktemp("gold-joins")):
        assert srv.http.post("/api/v1/gold", content=json.dumps(GOLD)).json()["loaded"] == 1
        yield srv


def _send(server: Server, attrs: dict[str, str]) -> str:
    provider = http_provider(server.url, service="helpdesk")
    tracer = provider.get_tracer("app")
    with tracer.start_as_current_span(
        "request", attributes={"openinference.span.kind": "CHAIN", **attrs}
    ) as root:
        trace_id = format(root.get_span_context().trace_id, "032x")
    provider.force_flush()
    return trace_id


def test_the_doctor_names_why_traces_joined_no_case(server: Server) -> None:
    sent = {
        "named": _send(server, {"ragfault.case_id": "refund", "output.value": "Thirty days."}),
        "asked": _send(server, {"input.value": QUESTION, "output.value": "Thirty days."}),
        "inside": _send(
            server,
            {
                "input.value": f"\nCurrent Task: {QUESTION}\n\nThis is the expected criteria for your final answer",
                "output.value": "Thirty days.",
            },
        ),  # fmt: skip
        "blind": _send(server, {"output.value": "Thirty days."}),
        "other": _send(server, {"input.value": "What are the opening hours?", "output.value": "9 to 5."}),
    }
    wait_evaluated(server, list(sent.values()))
    rep = server.http.get("/api/v1/coverage").json()
    section = rep["gold_joins"]
    assert section["services"] == [
        {"service_name": "helpdesk", "traces": 5, "joined": 2, "no_question": 1, "unmatched": 2}
    ]
    examples = {e["trace_id"]: e for e in section["examples"]}
    assert set(examples) == {sent["inside"], sent["other"]}
    assert (examples[sent["inside"]]["holds_case"], examples[sent["inside"]]["fix"]) == ("refund", FIX_INSIDE)
    assert examples[sent["other"]]["holds_case"] is None
    # the first listed is the one that holds a case's question
    assert section["examples"][0]["trace_id"] == sent["inside"]
    text = subprocess.run(
        [sys.executable, "-m", "ragfault.cli", "doctor", "--server", server.url],
        capture_output=True, text=True, check=True, timeout=60,
    ).stdout  # fmt: skip
    assert "helpdesk: 2 of 5 joined a case; 1 recorded no question; 2 recorded one no case asks" in text
    assert f"holds the question of case refund ({QUESTION!r}): {FIX_INSIDE}" in text
    assert FIX_NONE in text


def test_without_since_the_doctor_reads_the_last_day_of_traffic(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """A month's store is read in time: without ``since`` the report covers the day up to the latest
    settled trace and says so; an explicit ``since`` covers what it names."""
    import time

    for srv in serve(tmp_path_factory.mktemp("doctor-window")):
        provider = http_provider(srv.url, service="helpdesk")
        tracer = provider.get_tracer("app")
        now = time.time_ns()
        ids = []
        for age_days in (3, 0):
            start = now - age_days * 86_400 * 10**9
            attrs = {
                "openinference.span.kind": "CHAIN",
                "input.value": QUESTION,
                "output.value": "Thirty days.",
            }
            span = tracer.start_span("request", attributes=attrs, start_time=start)
            span.end(end_time=start + 10**6)
            ids.append(format(span.get_span_context().trace_id, "032x"))
        provider.force_flush()
        wait_evaluated(srv, ids)
        rep = srv.http.get("/api/v1/coverage").json()
        assert rep["params"]["since_default"] is True
        assert [g["traces"] for g in rep["groups"]] == [1]
        old = srv.http.get("/api/v1/coverage", params={"since": "2000-01-01T00:00:00"}).json()
        assert [g["traces"] for g in old["groups"]] == [2] and "since_default" not in old["params"]
