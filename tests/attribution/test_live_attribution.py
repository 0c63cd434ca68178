"""``live_attribution``: the fault-injection traces of ``test_root_causes`` sent to a real server that
holds the knowledge base but none of their gold cases, in every trace shape and both languages. Each
trace whose planted cause the trace (and the registry) can prove gets that cause, with evidence that
names the document; every other trace gets a real failing layer it shows, or nothing
(``none_seen``). Correct refusals beside topical context are not called over-refusals."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from tests.attribution.conftest import serve, wait_evaluated
from tests.attribution.data import EN_OK, KB, PLANTS, QUERY, TRAPS, docs, jsonl
from tests.attribution.test_root_causes import SHAPES, emit
from tests.conftest import Server, make_settings
from tests.otel_helpers import http_provider
from tests.store.conftest import lake, postgres  # noqa: F401  (fixtures of the lake test)
from tests.tracegen import agent_trace, rag_trace

LANGS = ("en", "zh")
CAUSES = tuple(PLANTS["en"])

# a planted cause no trace can show without its reference -> the layer the trace does show
SHOWN_AS = {
    "evidence_not_in_kb": "unsupported_claims",  # the answer states what no context sentence supports
    "answered_unanswerable": "unsupported_claims",
    "incomplete_answer": "none_seen",  # what the answer left out is known only to the gold case
    "ok": "none_seen",
}
# correct refusals beside context on the question's topic: nothing wrong
# the layers live_evidence proves from the registry and the cut candidates
EVIDENCE_LAYERS = ("no_retrieval", "candidate_miss", "dropped_before_context", "over_refusal")
NO_EVIDENCE_CLAIM = "no evidence claim"
# none of those layers may be claimed: (question, candidates, reranked, answer, retrieve). Answers
# given without context (chat, off-topic) may well be flagged by the answer-support tier.
NEGATIVES: dict[str, tuple[str, tuple[str, ...], tuple[str, ...] | None, str, bool]] = {
    # correct refusals beside context on the question's topic
    "en-correct-refusal": (QUERY["en-none"], ("retention-v2", "export-v2"), None,
                           "The documents do not say how far retention can be extended.", True),
    "zh-correct-refusal": (QUERY["zh-none"], ("member-transfer", "refund-policy-2026"), None,
                           "资料中没有家庭套餐的价格，请咨询人工客服。", True),
    "en-refusal-other-region": ("How long are logs retained for enterprise accounts in the EU region?",
                                ("retention-v2",), None, "I don't know the EU retention period.", True),
    # no retrieval, and nothing in the registry answers the question
    "en-chat": ("Hello! How are you today?", (), None, "I'm fine, thanks. How can I help?", False),
    "en-off-topic": ("What is the weather in Paris tomorrow?", (), None, "I cannot check the weather.", False),
    "zh-off-topic": ("明天北京的天气怎么样？", (), None, "抱歉，我无法查询天气。", False),
    # a reranker cut documents the answer does not need
    "en-cut-unneeded": (QUERY["en-retry"], ("retry-v2", "sso-setup", "export-v2"), ("retry-v2",), EN_OK, True),
}  # fmt: skip


def emit_question(tracer: Any, shape: str, question: str, negative: tuple[Any, ...]) -> str:
    """``emit`` for a question of no gold case."""
    _, cands, reranked, answer, retrieve = negative
    kind, convention, retrieval = SHAPES[shape]
    kwargs: dict[str, Any] = dict(
        query=question, answer=answer, candidates=docs(cands), retrieve=retrieve, run_id=shape,
        reranked=docs(reranked) if reranked is not None else None, convention=convention,
    )  # fmt: skip
    if kind == "agent":
        return agent_trace(tracer, retrieval=retrieval, user_scope=["public", "support"], **kwargs)
    return rag_trace(tracer, **kwargs)


def expected(shape: str, cause: str) -> str:
    """The live root cause of a planted cause in a trace shape: a permission violation needs the
    caller's scopes, which only the agent shapes send."""
    if cause == "permission_violation" and SHAPES[shape][0] != "agent":
        return "none_seen"
    return SHOWN_AS.get(cause, cause)


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, dict[str, tuple[str, str]]]]:
    """KB loaded, no gold; every plant, trap and negative in every shape. Yields the server and, per
    key, (trace id, expected live root cause)."""
    for srv in serve(tmp_path_factory.mktemp("live-attribution")):
        assert srv.http.post("/api/v1/kb", content=jsonl(KB)).json()["loaded"] == len(KB)
        provider = http_provider(srv.url, batch=True)
        tracer = provider.get_tracer("live")
        ids: dict[str, tuple[str, str]] = {}
        for shape in SHAPES:
            for lang in LANGS:
                for cause, plant in PLANTS[lang].items():
                    ids[f"{shape}/{lang}/{cause}"] = (
                        emit(tracer, shape, plant, run_id=shape),
                        expected(shape, cause),
                    )
            for name, (_, plant, mode, by_query, cause) in TRAPS.items():
                tid = emit(tracer, shape, plant, mode, by_query, run_id=shape)
                ids[f"{shape}/trap/{name}"] = (tid, expected(shape, cause))
            for name, neg in NEGATIVES.items():
                ids[f"{shape}/neg/{name}"] = (emit_question(tracer, shape, neg[0], neg), NO_EVIDENCE_CLAIM)
        provider.shutdown()
        wait_evaluated(srv, [t for t, _ in ids.values()])
        yield srv, ids


def rows(server: Server) -> dict[str, dict[str, Any]]:
    out = {}
    for tid, root, layers, evidence, basis, missing in server.sql(
        "SELECT trace_id, root_cause, failing_layers, evidence, basis, missing_fields FROM live_attribution"
    ):
        out[tid] = {"root_cause": root, "failing_layers": layers, "evidence": json.loads(evidence),
                    "basis": basis, "missing_fields": missing}  # fmt: skip
    return out


def test_every_provable_cause_is_claimed_and_nothing_else(
    live: tuple[Server, dict[str, tuple[str, str]]],
) -> None:
    server, ids = live
    got = rows(server)
    assert len(got) == len(ids), "one row per trace without a gold case"

    def right(want: str, row: dict[str, Any]) -> bool:
        if want == NO_EVIDENCE_CLAIM:  # the answer-side tiers may flag these answers; the registry must not
            return not set(row["failing_layers"]) & set(EVIDENCE_LAYERS)
        return bool(row["root_cause"] == want)

    wrong = {k: (want, got[t]["root_cause"], got[t]["failing_layers"]) for k, (t, want) in ids.items()
             if not right(want, got[t])}  # fmt: skip
    assert not wrong, json.dumps(wrong, indent=1, ensure_ascii=False)
    assert "ok" not in {r["root_cause"] for r in got.values()}


def test_evidence_names_the_document(live: tuple[Server, dict[str, tuple[str, str]]]) -> None:
    server, ids = live
    got = rows(server)

    def row(key: str) -> dict[str, Any]:
        return got[ids[key][0]]

    r = row("agent-tool-oi/en/dropped_before_context")
    found = r["evidence"]["dropped_before_context"]["found"]
    assert r["basis"] == "trace"
    assert [(f["doc_id"], f["step"], f["via"]) for f in found] == [("retry-v2", "rerank_cut", "answer_claim")]
    assert found[0]["sentence"] == "Wait 30 seconds before retrying."
    found = row("genai/zh/dropped_before_context")["evidence"]["dropped_before_context"]["found"]
    assert [(f["doc_id"], f["step"]) for f in found] == [("refund-policy-2026", "rerank_cut")]
    r = row("openinference/zh/candidate_miss")
    assert r["basis"] == "registry"
    # the current policy is named; the superseded 2024 one is no evidence the app should have found
    assert [f["doc_id"] for f in r["evidence"]["candidate_miss"]["found"]] == ["refund-policy-2026"]
    r = row("openinference/en/candidate_miss")
    assert [f["doc_id"] for f in r["evidence"]["candidate_miss"]["found"]] == ["export-v2"]
    r = row("agent-retriever-genai/en/no_retrieval")
    assert r["basis"] == "registry"
    assert [f["doc_id"] for f in r["evidence"]["no_retrieval"]["found"]] == ["retry-v2"]
    r = row("genai/zh/over_refusal")
    assert [f["doc_id"] for f in r["evidence"]["over_refusal"]["found"]] == ["refund-policy-2026"]
    r = row("agent-tool-genai/zh/permission_violation")
    assert "finance-discounts" in json.dumps(r["evidence"]["permission_violation"])


def test_gold_traces_are_not_live(tmp_path) -> None:
    """A trace that joins a gold case is attributed by ``attribution`` only, and the live evidence
    evaluator writes nothing for it."""
    from tests.attribution.data import GOLD

    for srv in serve(tmp_path):
        srv.http.post("/api/v1/kb", content=jsonl(KB))
        srv.http.post("/api/v1/gold", content=jsonl(GOLD))
        provider = http_provider(srv.url)
        gold = emit(provider.get_tracer("gold"), "openinference", PLANTS["en"]["dropped_before_context"])
        provider.shutdown()
        wait_evaluated(srv, [gold])
        assert srv.scalar("SELECT count(*) FROM live_attribution WHERE trace_id = $t", t=gold) == 0
        evaluator_rows = (
            "SELECT count(*) FROM evaluations WHERE trace_id = $t AND evaluator = 'live_evidence'"
        )
        assert srv.scalar(evaluator_rows, t=gold) == 0
        assert (
            srv.scalar("SELECT root_cause FROM attribution WHERE trace_id = $t", t=gold)
            == "dropped_before_context"
        )


def test_the_view_on_a_lake(tmp_path, request: pytest.FixtureRequest) -> None:
    """``live_attribution`` exists on a lake collector too (``--store ducklake``) and gives the rows the
    single-file store gives for the same traces."""
    from tests.store.lake.conftest import _lake_set

    if not _lake_set():
        pytest.skip("needs the lake extra (DuckDB 1.5.5 + extension packages)")
    store_lake = request.getfixturevalue("lake")
    keys = [
        ("openinference", "en", c) for c in ("dropped_before_context", "over_refusal", "candidate_miss", "ok")
    ]
    keys += [("agent-tool-genai", "zh", c) for c in ("no_retrieval", "permission_violation", "stale_context")]
    settings = {"store": "ducklake", "catalog": store_lake.catalog, "data_path": str(store_lake.data_path),
                "extension_repository": False}  # fmt: skip
    got = []
    for store, overrides in (("file", {}), ("lake", settings)):
        srv = Server(make_settings(tmp_path / store, **overrides))
        try:
            srv.http.post("/api/v1/kb", content=jsonl(KB))
            provider = http_provider(srv.url)
            tracer = provider.get_tracer(store)
            ids = [emit(tracer, shape, PLANTS[lang][cause], run_id=store) for shape, lang, cause in keys]
            provider.shutdown()
            wait_evaluated(srv, ids)
            by_id = {r[0]: r[1:] for r in srv.sql("SELECT trace_id, root_cause, basis FROM live_attribution")}
            got.append([by_id[t] for t in ids])
        finally:
            srv.stop()
    assert got[0] == got[1]
    assert [r[0] for r in got[1]] == [expected(shape, cause) for shape, _, cause in keys]
