"""Every root cause (docs/architecture.md, Attribution order), attributed through a real server and the ``attribution`` view, for
OpenInference, GenAI-semconv and agent-shaped traces, in English and in Chinese, with the traps:
stale or forbidden documents the reranker cut, chunk UUIDs with the source id only in metadata,
documents without any id, traces joined to their case by query text, and the stale-context policy."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from tests.attribution.conftest import serve, wait_evaluated
from tests.attribution.data import GOLD, KB, PLANTS, QUERY, TRAPS, Plant, docs, jsonl, query_variant
from tests.conftest import Server
from tests.otel_helpers import http_provider
from tests.tracegen import agent_trace, rag_trace

# trace shapes: (emitter, convention, agent retrieval style)
SHAPES = {
    "openinference": ("rag", "openinference", None),
    "genai": ("rag", "genai", None),
    "agent-tool-oi": ("agent", "openinference", "tool"),
    "agent-tool-genai": ("agent", "genai", "tool"),
    "agent-retriever-oi": ("agent", "openinference", "retriever"),
    "agent-retriever-genai": ("agent", "genai", "retriever"),
}
LANGS = ("en", "zh")
CAUSES = tuple(PLANTS["en"])


def emit(
    tracer: Any, shape: str, plant: Plant, mode: str = "id", by_query: bool = False, run_id: str = "r"
) -> str:
    case_id, cands, reranked, answer, citations, retrieve = plant
    kind, convention, retrieval = SHAPES[shape]
    kwargs: dict[str, Any] = dict(
        query=query_variant(QUERY[case_id]) if by_query else QUERY[case_id],
        answer=answer,
        candidates=docs(cands, mode),
        reranked=docs(reranked, mode) if reranked is not None else None,
        retrieve=retrieve,
        case_id=None if by_query else case_id,
        run_id=run_id,
        citations=list(citations) if citations else None,
        convention=convention,
    )
    if kind == "agent":
        scope = next(c["user_scope"] for c in GOLD if c["case_id"] == case_id)
        return agent_trace(tracer, retrieval=retrieval, user_scope=scope, **kwargs)
    return rag_trace(tracer, **kwargs)


@pytest.fixture(scope="module")
def attributed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, dict[str, str]]]:
    """Load the set, send every trace, settle once; yields the server and trace ids by test key."""
    for srv in serve(tmp_path_factory.mktemp("root-causes")):
        assert srv.http.post("/api/v1/kb", content=jsonl(KB)).json()["loaded"] == len(KB)
        assert srv.http.post("/api/v1/gold", content=jsonl(GOLD)).json()["loaded"] == len(GOLD)
        provider = http_provider(srv.url, batch=True)
        tracer = provider.get_tracer("root-causes")
        ids: dict[str, str] = {}
        for shape in SHAPES:
            for lang in LANGS:
                for cause, plant in PLANTS[lang].items():
                    ids[f"{shape}/{lang}/{cause}"] = emit(tracer, shape, plant, run_id=shape)
            for name, (_, plant, mode, by_query, _) in TRAPS.items():
                ids[f"{shape}/trap/{name}"] = emit(tracer, shape, plant, mode, by_query, run_id=shape)
        provider.shutdown()
        wait_evaluated(srv, list(ids.values()))
        yield srv, ids


def attribution(server: Server, trace_id: str) -> dict[str, Any]:
    rows = server.sql(
        "SELECT case_id, root_cause, failing_layers, evidence FROM attribution WHERE trace_id = $t",
        t=trace_id,
    )
    assert len(rows) == 1, f"no attribution row for {trace_id}: {rows}"
    case_id, root, layers, evidence = rows[0]
    return {
        "case_id": case_id,
        "root_cause": root,
        "failing_layers": layers,
        "evidence": json.loads(evidence),
    }


def explain(server: Server, trace_id: str) -> str:
    rows = server.sql(
        "SELECT metric, status, value, passed, label, details FROM evaluations WHERE trace_id = $t "
        "AND span_id IS NULL AND metric NOT LIKE '%@%' ORDER BY metric",
        t=trace_id,
    )
    return "\n".join(str(r) for r in rows)


@pytest.mark.parametrize("cause", CAUSES)
@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("shape", tuple(SHAPES))
def test_root_cause(attributed: tuple[Server, dict[str, str]], shape: str, lang: str, cause: str) -> None:
    server, ids = attributed
    trace_id = ids[f"{shape}/{lang}/{cause}"]
    row = attribution(server, trace_id)
    assert row["case_id"] == PLANTS[lang][cause][0]
    assert row["root_cause"] == cause, explain(server, trace_id)
    if cause == "ok":
        assert row["failing_layers"] == [] and row["evidence"] == {}
    else:
        assert row["failing_layers"][0] == cause
        assert row["evidence"].get(cause) is not None, row


@pytest.mark.parametrize("trap", tuple(TRAPS))
@pytest.mark.parametrize("shape", tuple(SHAPES))
def test_trap(attributed: tuple[Server, dict[str, str]], shape: str, trap: str) -> None:
    server, ids = attributed
    trace_id = ids[f"{shape}/trap/{trap}"]
    _, plant, _, _, expected = TRAPS[trap]
    row = attribution(server, trace_id)
    assert row["case_id"] == plant[0]
    assert row["root_cause"] == expected, explain(server, trace_id)


def test_evidence_names_what_failed(attributed: tuple[Server, dict[str, str]]) -> None:
    """The evidence behind each verdict names the document, unit or claim."""
    server, ids = attributed
    ev = attribution(server, ids["openinference/trap/en-forbidden-cut"])["evidence"]["permission_violation"]
    assert "salary-bands" in json.dumps(ev)
    ev = attribution(server, ids["genai/trap/zh-noid-stale"])["evidence"]["stale_context"]
    assert [s["doc_id"] for s in ev["stale"]] == ["refund-policy-2024"]
    ev = attribution(server, ids["agent-tool-oi/en/dropped_before_context"])["evidence"][
        "dropped_before_context"
    ]
    assert ev["dropped"][0]["label"] == "retry-v2" and ev["dropped"][0]["step"] == "rerank_cut"
    ev = attribution(server, ids["openinference/en/candidate_miss"])["evidence"]["candidate_miss"]
    assert [m["label"] for m in ev["missed"]] == ["export-v2"]
    ev = attribution(server, ids["genai/zh/unsupported_claims"])["evidence"]["unsupported_claims"]
    assert [(c["verdict"], c["conflicts"]) for c in ev["claims"]] == [("contradicted", ["7 天 vs 30 天"])]
    # the stale document of a not-followed answer is still flagged, though the trace is ok
    flagged = server.scalar(
        "SELECT value FROM evaluations WHERE trace_id = $t AND metric = 'stale_context' AND span_id IS NULL",
        t=ids["openinference/trap/en-stale-not-followed"],
    )
    assert flagged == 0.5


def test_stale_policy_always(tmp_path) -> None:
    """With stale_context = "always", a stale document in the final context fails by itself; a stale
    document the reranker cut still does not."""
    config = '[evaluation.evaluators.freshness]\nstale_context = "always"\n'
    for srv in serve(tmp_path, config):
        srv.http.post("/api/v1/kb", content=jsonl(KB))
        srv.http.post("/api/v1/gold", content=jsonl(GOLD))
        provider = http_provider(srv.url)
        tracer = provider.get_tracer("policy")
        followed_not = TRAPS["en-stale-not-followed"][1]
        ids = {
            "not-followed": emit(tracer, "openinference", followed_not),
            "not-followed-zh": emit(
                tracer, "agent-tool-genai", ("zh-refund", ("refund-policy-2026", "refund-policy-2024"), None,
                                            "30 天内可申请退款，按剩余天数计算退款金额。", None, True)),
            "cut": emit(tracer, "genai", TRAPS["en-stale-cut"][1]),
        }  # fmt: skip
        provider.shutdown()
        wait_evaluated(srv, list(ids.values()))
        assert attribution(srv, ids["not-followed"])["root_cause"] == "stale_context"
        assert attribution(srv, ids["not-followed-zh"])["root_cause"] == "stale_context"
        assert attribution(srv, ids["cut"])["root_cause"] == "ok"


@pytest.mark.parametrize("shape", tuple(SHAPES))
def test_agent_counters(attributed: tuple[Server, dict[str, str]], shape: str) -> None:
    """A search tool that returns documents, or wraps a retriever, is one retrieval call; the agent
    shapes have two tools and two LLM calls; the agent that skipped search made no retrieval call."""
    server, ids = attributed

    def counters(key: str) -> dict[str, float]:
        rows = server.sql(
            "SELECT metric, value FROM evaluations WHERE trace_id = $t AND metric IN "
            "('retrieval_calls', 'tool_calls', 'llm_calls')",
            t=ids[key],
        )
        return dict((m, v) for m, v in rows)

    agent = SHAPES[shape][0] == "agent"
    assert counters(f"{shape}/en/ok") == {
        "retrieval_calls": 1,
        "tool_calls": 2 if agent else 0,
        "llm_calls": 2 if agent else 1,
    }
    assert counters(f"{shape}/zh/no_retrieval")["retrieval_calls"] == 0


def test_tool_result_documents_are_candidates() -> None:
    """The normalizer reads a tool result that lists documents as candidates, and nothing else."""
    from collector.normalize import DEFAULT_SOURCE_KEYS, normalize_span

    def tool(result: str) -> list[tuple[str | None, str | None, str | None]]:
        attrs = {
            "openinference.span.kind": "TOOL",
            "tool.name": "lookup",
            "input.value": "{}",
            "output.value": result,
        }
        return [(d.stage, d.doc_id, d.content) for d in normalize_span(attrs, DEFAULT_SOURCE_KEYS).docs]

    listed = json.dumps(
        [{"id": "c-1", "page_content": "Logs are retained for 7 days.", "metadata": {"source": "r-v2"}}]
    )
    assert tool(listed) == [("candidate", "r-v2", "Logs are retained for 7 days.")]
    assert tool(json.dumps({"documents": [{"text": "会员权益仅限本人账号使用。"}]})) == [
        ("candidate", None, "会员权益仅限本人账号使用。")
    ]
    for not_docs in ('["Paris", "Rome"]', '[{"city": "Paris"}]', "Logs are retained for 7 days.", "42", "[]"):
        assert tool(not_docs) == [], not_docs
