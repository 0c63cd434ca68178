"""The document evaluators' shared and precomputed look-ups give the rows of the straightforward
versions.

The references below are the evaluators as they were written before their look-ups were shared
(staleness judged once a trace for freshness and follows_stale, the registry's superseded documents
indexed once a registry, the quantities of a text as a cached set). Random registries (versions
superseding each other, expiry dates, texts with numbers and units) and traces retrieving their
documents by id, by content only or not at all, with answers stating current and stale values, are
evaluated both ways on separate inputs and registries, and the rows compared field by field.
"""

from __future__ import annotations

import gc
import random
import weakref
from datetime import datetime
from typing import Any

import orjson

from evaluators import lexical
from evaluators.builtin import follows_stale, freshness
from evaluators.builtin._docs import distinct, doc_name, judged_once
from evaluators.eval_input import EvalInput, KnowledgeBase
from evaluators.gold import AnyOf, Evidence
from evaluators.metric import Metric, not_applicable, ratio
from evaluators.service.config import EvaluationSettings, evaluator_configs
from evaluators.service.registry import discover
from evaluators.service.running import Runner
from evaluators.spec import NoConfig
from evaluators.trace_view import StepDoc
from tests.evaluators.evidence_builders import case, inp, kb, rag

VALUES = ("7 days", "30 days", "14 days", "$20", "$25", "5 GB", "10 GB", "3 hours", "90 days")
WORDS = ("refund", "within", "purchase", "members", "export", "storage", "support", "plan", "limit")


def _text(rng: random.Random) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randrange(2, 6))]
    for _ in range(rng.randrange(0, 3)):
        words.insert(rng.randrange(len(words) + 1), rng.choice(VALUES))
    return " ".join(words) + "."


def _registry(rng: random.Random) -> list[dict[str, Any]]:
    n = rng.randrange(1, 9)
    rows: list[dict[str, Any]] = []
    for k in range(n):
        row: dict[str, Any] = {"doc_id": f"kb{k}", "version": str(rng.randrange(1, 4))}
        if rng.random() < 0.9:
            row["content"] = _text(rng)
        r = rng.random()
        if r < 0.6:
            row["superseded_by"] = f"kb{rng.randrange(n + 2)}"  # sometimes not in the registry
        if rng.random() < 0.3:
            row["valid_to"] = rng.choice(("2026-03-01", "2027-01-01"))
        elif rng.random() < 0.2:
            row["valid_from"] = rng.choice(("2026-01-01", "2026-12-01"))
        rows.append(row)
    return rows


def _doc(rng: random.Random, rows: list[dict[str, Any]]) -> dict[str, Any] | str:
    row = rng.choice(rows)
    r = rng.random()
    if r < 0.4:
        return {"id": row["doc_id"], "content": row.get("content") if rng.random() < 0.8 else None}
    if r < 0.6 and row.get("content"):
        return row["content"]  # identified by its content
    meta: dict[str, Any] = {}
    if rng.random() < 0.5:
        meta["superseded_by"] = rng.choice(rows)["doc_id"]
    if rng.random() < 0.4:
        meta["valid_to"] = rng.choice(("2026-03-01", "2027-01-01"))
    return {"id": f"x{rng.randrange(4)}", "content": _text(rng), "metadata": meta or None}


def random_case(rng: random.Random) -> tuple[KnowledgeBase, KnowledgeBase, EvalInput, EvalInput]:
    rows = _registry(rng)
    cands = [_doc(rng, rows) for _ in range(rng.randrange(0, 10))] if rng.random() < 0.9 else None
    reranked = cands[: rng.randrange(0, 5)] if cands and rng.random() < 0.6 else None
    answer = " ".join(_text(rng) for _ in range(rng.randrange(1, 3))) if rng.random() < 0.9 else ""
    trace = rag(candidates=cands, reranked=reranked, answer=answer)
    evidence = [{"doc_id": rng.choice(rows)["doc_id"]} for _ in range(rng.randrange(0, 5))]
    gold = case(evidence, as_of=rng.choice((None, "2026-06-01T00:00:00"))) if rng.random() < 0.9 else None
    a, b = kb(*rows), kb(*rows)
    return a, b, inp(trace, gold, a), inp(trace, gold, b)


# --- the references: the evaluators as they were -----------------------------------------------


def _evidence_ids(inp: EvalInput) -> set[str]:
    out: set[str] = set()
    for item in inp.case.evidence if inp.case else ():
        for ev in item.any_of if isinstance(item, AnyOf) else [item]:
            if isinstance(ev, Evidence) and ev.doc_id:
                out.add(ev.doc_id)
    return out


def reference_staleness(inp: EvalInput, doc: StepDoc) -> dict[str, Any] | None:
    kb_doc = inp.matching.kb_doc(doc)
    if kb_doc is None:
        return freshness._staleness(inp, doc, None)
    return freshness._staleness(inp, doc, kb_doc)


def reference_follows_stale(inp: EvalInput) -> list[Metric]:
    trace = inp.trace
    evidence = _evidence_ids(inp)
    stale: dict[str, str] = {}
    current: dict[str, str] = {}
    retrieved_stale: set[str] = set()
    context_stale: set[str] = set()
    for stage, docs in (
        ("candidate", distinct(inp, trace.candidates)),
        ("context", distinct(inp, trace.context_docs)),
    ):
        for d in docs:
            kb_doc = inp.matching.kb_doc(d)
            text = d.content or (kb_doc.content if kb_doc is not None else None) or ""
            name = doc_name(inp, d)
            if reference_staleness(inp, d):
                stale[name] = text
                (retrieved_stale if stage == "candidate" else context_stale).add(name)
            elif stage == "context":
                current[name] = text
    for doc_id in sorted(evidence):
        kb_doc = inp.kb.get(doc_id)
        if kb_doc is not None and kb_doc.content:
            current.setdefault(doc_id, kb_doc.content)
    if evidence:
        for doc in inp.kb.by_id.values():
            if doc.superseded_by in evidence and doc.content and doc.doc_id not in current:
                stale.setdefault(doc.doc_id, doc.content)
    if not stale:
        return [not_applicable("follows_stale", "no stale version among the documents or of the evidence")]
    answer = trace.answer_text
    if not answer:
        return [not_applicable("follows_stale", "no answer captured")]
    cur_q = {q for text in current.values() for q in lexical.quantities_of(text)}
    stated = lexical.quantities_of(answer)
    followed: dict[str, list[str]] = {}
    for name, text in stale.items():
        only = [str(q) for q in stated if q in set(lexical.quantities_of(text)) and q not in cur_q]
        if only:
            followed[name] = only
    values = sorted({v for vs in followed.values() for v in vs})
    details: dict[str, Any] = {
        "values": values,
        "followed": followed,
        "stale_versions": sorted(stale),
        "stale_retrieved": bool(retrieved_stale),
        "stale_in_context": bool(context_stale),
    }
    return [ratio("follows_stale", 1 if values else 0, 1, details=details)]


def reference_freshness(inp: EvalInput, config: freshness.Config) -> list[Metric]:
    out: list[Metric] = []
    trace = inp.trace
    memo: dict[int, dict[str, Any] | None] = {}

    def stale_of(doc: StepDoc) -> dict[str, Any] | None:
        if id(doc) not in memo:
            memo[id(doc)] = reference_staleness(inp, doc)
        return memo[id(doc)]

    as_of = inp.as_of.isoformat() if isinstance(inp.as_of, datetime) else None
    by_docs: dict[tuple[int, ...], list[dict[str, Any]]] = {}

    def stale_among(docs: list[StepDoc]) -> list[dict[str, Any]]:
        return judged_once(by_docs, docs, lambda d: [s for s in map(stale_of, d) if s])

    for step, docs in trace.candidates_by_step:
        docs = distinct(inp, docs)
        stale = stale_among(docs)
        out.append(
            ratio(
                "stale_candidates", len(stale), len(docs), span_id=step.span_id,
                details={"stale": stale, "as_of": as_of}, na_reason="no candidates",
            )
        )  # fmt: skip
    cands = distinct(inp, trace.candidates)
    if not trace.candidates_by_step:
        out.append(not_applicable("stale_candidates", "no retrieval step"))
    else:
        stale = stale_among(cands)
        out.append(
            ratio(
                "stale_candidates", len(stale), len(cands),
                details={"stale": stale, "negative": freshness._negative(inp, cands), "as_of": as_of},
                na_reason="no candidates",
            )
        )  # fmt: skip
    ctx = distinct(inp, trace.context_docs)
    if not ctx:
        out.append(not_applicable("stale_context", "no context documents"))
        return out
    judged = [(d, stale_of(d)) for d in ctx]
    stale_docs = [d for d, s in judged if s]
    fresh_docs = [d for d, s in judged if not s]
    follows = freshness.followed(inp, stale_docs, fresh_docs, config.min_coverage)
    stale = [{**s, "followed": s["doc_id"] in follows} for _, s in judged if s]
    passed = not stale if config.stale_context == "always" else not follows
    out.append(
        ratio(
            "stale_context", len(stale), len(ctx), passed=passed, label=config.stale_context,
            details={
                "stale": stale, "followed_claims": follows, "policy": config.stale_context,
                "negative": freshness._negative(inp, ctx), "as_of": as_of,
            },
        )
    )  # fmt: skip
    return out


# --- the comparisons ----------------------------------------------------------------------------


def rows_of(metrics: list[Metric]) -> list[tuple[Any, ...]]:
    """The metrics as written: details as their JSON text (key order included)."""
    return [(*m[:-1], orjson.dumps(m.details, option=orjson.OPT_NON_STR_KEYS)) for m in metrics]


def test_follows_stale_and_freshness_equal_their_references() -> None:
    rng = random.Random(2201)
    config = freshness.Config()
    followed = stale = 0
    for _ in range(1500):
        _, _, new, ref = random_case(rng)
        # freshness first, as a runner may order them: follows_stale then reuses its judgements
        got = freshness.evaluate(new, config) + follows_stale.evaluate(new, NoConfig())
        want = reference_freshness(ref, config) + reference_follows_stale(ref)
        assert rows_of(got) == rows_of(want)
        last = want[-1]
        followed += last.value == 1
        stale += last.status == "ok"
    # the generator reaches every branch: stale versions found, and answers that follow them
    assert followed > 50 and stale - followed > 50, (followed, stale)


def test_follows_stale_alone_equals_its_reference() -> None:
    """follows_stale without freshness before it (it judges staleness itself then)."""
    rng = random.Random(2202)
    for _ in range(600):
        _, _, new, ref = random_case(rng)
        assert rows_of(follows_stale.evaluate(new, NoConfig())) == rows_of(reference_follows_stale(ref))


def test_the_superseded_index_follows_the_registry() -> None:
    """The index is kept per registry: a second registry with other rows gets its own."""
    rows = [
        {"doc_id": "a", "content": "limit 7 days.", "superseded_by": "b"},
        {"doc_id": "b", "content": "x."},
    ]
    other = [
        {"doc_id": "a", "content": "limit 30 days.", "superseded_by": "b"},
        {"doc_id": "b", "content": "y."},
    ]
    answers = []
    for registry in (kb(*rows), kb(*other)):
        trace = rag(candidates=[{"id": "b", "content": "limit 14 days."}], answer="The limit is 30 days.")
        out = follows_stale.evaluate(inp(trace, case([{"doc_id": "b"}]), registry), NoConfig())
        answers.append(out[0].value)
    assert answers == [0, 1]


def test_stale_versions_of_the_evidence_in_the_registry_order() -> None:
    """Six evidence documents, each superseding an older version the answer follows: the older
    versions are listed as the registry holds them, whatever order the evidence ids come in."""
    rows: list[dict[str, Any]] = []
    values = []
    for k in range(6):
        values.append(f"{k + 2} days")
        rows.append({"doc_id": f"old{k}", "content": f"limit {k + 2} days.", "superseded_by": f"new{5 - k}"})
    rows += [{"doc_id": f"new{k}", "content": "limit 1 day."} for k in range(6)]
    trace = rag(
        candidates=[{"id": "new0", "content": "limit 1 day."}], answer=" ".join(f"{v}." for v in values)
    )
    gold = case([{"doc_id": f"new{k}"} for k in (3, 0, 5, 1, 4, 2)])
    got = follows_stale.evaluate(inp(trace, gold, kb(*rows)), NoConfig())
    ref = reference_follows_stale(inp(trace, gold, kb(*rows)))
    assert rows_of(got) == rows_of(ref)
    assert list(got[0].details["followed"]) == [f"old{k}" for k in range(6)]  # type: ignore[index]


def test_an_evaluated_input_is_freed_without_the_garbage_collector() -> None:
    """What the evaluators cache on a trace's input refers to no input: a batch's inputs are freed
    by reference counting when the batch ends (the runner pauses the collector meanwhile, and an
    input in a cycle would wait for the next collection with everything it holds)."""
    specs = discover()
    runner = Runner(specs, evaluator_configs(EvaluationSettings(), specs))
    rng = random.Random(2203)
    gc.collect()
    gc.disable()
    try:
        for _ in range(50):
            _, _, new, _ = random_case(rng)
            runner.run(new)
            ref = weakref.ref(new)
            del new
            assert ref() is None
    finally:
        gc.enable()
