"""The answer-side evaluators end to end: traces sent with the OpenTelemetry SDK to a real server,
gold cases and the registry loaded over HTTP, verdicts read back from ``evaluations`` with SQL."""

from __future__ import annotations

import json

import pytest

from tests.evaluators.test_generation import BASELINE, LOG_CASES, LOG_KB
from tests.otel_helpers import http_provider
from tests.tracegen import rag_trace

MINE = (
    "refusal",
    "answerability",
    "fact_coverage",
    "facts_missing_in_context",
    "answer_support",
    "citation_validity",
    "retrieval_decision",
)


def _wait_rows(server, trace_ids: list[str], metric: str, timeout: float = 30) -> None:
    server.wait_for(
        "SELECT count(DISTINCT trace_id) FROM evaluations WHERE metric = $m AND list_contains($ids, trace_id)",
        len(trace_ids),
        timeout=timeout,
        m=metric,
        ids=trace_ids,
    )


def test_seed_000_baseline_through_the_server(server) -> None:
    kb = "\n".join(json.dumps(d.model_dump(mode="json", exclude_none=True)) for d in LOG_KB)
    gold = "\n".join(json.dumps(c.model_dump(mode="json", exclude_none=True)) for c in LOG_CASES.values())
    assert server.http.post("/api/v1/kb", content=kb).json()["loaded"] == 4
    assert server.http.post("/api/v1/gold", content=gold).json()["loaded"] == 4
    content = {d.doc_id: d.content for d in LOG_KB}

    provider = http_provider(server.url)
    tracer = provider.get_tracer("e2e")
    ids = {}
    for cid, top2, answer in BASELINE:
        ids[cid] = rag_trace(
            tracer,
            query=LOG_CASES[cid].query,
            answer=answer,
            candidates=[{"id": d, "content": content[d], "score": 1.0 - i / 10} for i, d in enumerate(top2)],
            case_id=cid,
            run_id="baseline",
            citations=top2[:1] if cid == "exact-id" else ["retention-v2"] if cid == "stale-version" else None,
        )
    provider.shutdown()
    server.settle()
    for metric in MINE:
        _wait_rows(server, list(ids.values()), metric)

    def row(cid: str, metric: str) -> list:
        rows = server.sql(
            "SELECT status, value, numerator, denominator, passed, label, span_id, evaluator FROM evaluations "
            "WHERE trace_id = $t AND metric = $m",
            t=ids[cid],
            m=metric,
        )
        assert len(rows) == 1, rows
        return rows[0]

    # answer support, micro over the run: 3 of 4 claims, on the answering LLM step
    support = server.sql(
        "SELECT sum(numerator), sum(denominator) FROM evaluations WHERE metric = 'answer_support' AND status = 'ok' "
        "AND run_id = 'baseline'"
    )
    assert support == [[3, 4]]
    llm_span = server.scalar(
        "SELECT span_id FROM steps WHERE trace_id = $t AND step_type = 'llm'", t=ids["no-answer"]
    )
    assert row("no-answer", "answer_support")[:7] == ["ok", 0.0, 0, 1, False, None, llm_span]
    assert row("no-answer", "answer_support")[7] == "answer_support"

    # fact coverage, macro over the answerable cases
    cov = server.sql(
        "SELECT avg(value), count(*) FROM evaluations WHERE metric = 'fact_coverage' AND status = 'ok' AND run_id = 'baseline'"
    )
    assert cov == [[0.5, 3]]
    assert row("no-answer", "fact_coverage")[0] == "not_applicable"

    # the refusal table: correct refusal 0/1, false refusal 0/3
    cells = dict(
        server.sql(
            "SELECT case_id, label FROM evaluations WHERE metric = 'answerability' AND run_id = 'baseline'"
        )
    )
    assert cells == {
        "exact-id": "answered_answerable",
        "two-facts": "answered_answerable",
        "stale-version": "answered_answerable",
        "no-answer": "answered_unanswerable",
    }
    assert row("no-answer", "refusal")[:6] == ["ok", 0.0, 0, 1, None, "answered"]

    # citations: the stale answer cites retention-v2, which was not in its context
    assert row("exact-id", "citation_validity")[:5] == ["ok", 1.0, 1, 1, True]
    assert row("stale-version", "citation_validity")[:5] == ["ok", 0.0, 0, 1, False]
    assert row("two-facts", "citation_validity")[0] == "not_applicable"

    # retrieval decision and the counters
    assert row("two-facts", "retrieval_decision")[4:6] == [True, "must_retrieve×retrieved"]
    assert row("two-facts", "llm_calls")[1] == 1
    assert row("two-facts", "retrieval_calls")[1] == 1
    root_ms = server.scalar(
        "SELECT duration_ms FROM spans WHERE trace_id = $t AND parent_span_id IS NULL", t=ids["two-facts"]
    )
    assert root_ms > 0 and row("two-facts", "latency_ms")[1] == pytest.approx(
        root_ms
    )  # the root span's duration

    details = json.loads(
        server.scalar(
            "SELECT details FROM evaluations WHERE trace_id = $t AND metric = 'facts_missing_in_context'",
            t=ids["two-facts"],
        )
    )
    assert details["missing"] == ["json"] and details["missing_in_context"] == []
