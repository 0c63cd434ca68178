#!/usr/bin/env python
"""``live_attribution`` against the gold-based ``attribution``: precision and recall per root cause,
the registry index at scale, and what the live evidence evaluator adds to the cheap tier.

1. **Accuracy.** The same traces are attributed twice: with their gold cases (``attribution``, the
   reference) and without them (``live_attribution``, knowledge base loaded). The cause a live trace
   should get is the first of its reference failing layers that a trace can show without a gold case:
   ``evidence_not_in_kb``, ``not_opened``, ``answered_unanswerable`` and ``incomplete_answer`` need the
   reference and are skipped; ``candidate_miss`` and ``no_retrieval`` are skipped when the evidence is
   not in the registry (nothing there to find); ``permission_violation`` when the trace does not name the
   caller's scopes; ``dropped_before_context`` when the answer neither refused nor stated an unsupported
   claim (every claim is held by the context that remained: nothing in the trace shows the drop mattered). None left: nothing to claim (``none_seen`` and ``insufficient_trace`` both count as
   no claim). Precision of a cause = traces claimed with it whose expected cause it is / traces claimed
   with it; recall = those / traces expected to get it. Two sets:
   - ``fault-injection``: the traces ``tests/attribution`` builds (every planted cause and trap, six
     trace shapes, English and Chinese), sent over OTLP/HTTP to two real servers;
   - ``examples``: the traces of ``examples/`` (seed 000's two runs, seed 002's refund traces A-H) as
     ``tests/attribution/test_examples.py`` sends them, with the same two servers' setup;
   - ``synthetic``: ``bench/evaluate.py``'s RAG traces (20 candidates reranked to 5, the evidence
     sometimes cut, sometimes a wrong number in the answer, a quarter without document ids, a registry
     of ``--kb-docs`` documents), evaluated in-process with ``StoreRunner``; traces nobody tuned on.
     A forbidden candidate is in about half of them and hides every later cause, so they are scored a
     second time with ``permission_violation`` left out of both sides.
2. **Index.** ``RegistryIndex`` over ``--index-docs`` registry documents (``bench/evaluate.py``'s, half
   Chinese): build time, then the time of one question (search and the coverage look-ups of its top
   ten), over ``--queries`` questions. CPU time (``time.process_time``): the machine may be shared.
3. **Cost.** On other synthetic traces (the next seed) without their gold cases, not evaluated
   before, each cheap-tier evaluator timed on its own (CPU time, ``time.process_time`` around ``fn``) in run order (evaluators share per-trace caches:
   the first that needs one pays for it; live_evidence runs after answer_support and freshness); the ratio live_evidence / the rest.

Run from the project root (about a minute):

    .venv/bin/python bench/live_attribution.py
    .venv/bin/python bench/live_attribution.py --traces 2000 --index-docs 100000 --skip-servers
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from bench.evaluate import build_db, make_kb, trace_ids  # noqa: E402
from collector.normalize import DEFAULT_SOURCE_KEYS  # noqa: E402
from evaluators.builtin._registry_index import RegistryIndex, terms_of  # noqa: E402
from evaluators.service.config import EvaluationSettings, evaluator_configs  # noqa: E402
from evaluators.service.registry import discover  # noqa: E402
from evaluators.service.runner import Runner, StoreRunner, gc_paused  # noqa: E402

LIVE = ("permission_violation", "no_retrieval", "stale_context", "candidate_miss", "dropped_before_context",
        "over_refusal", "unsupported_claims", "invalid_citation")  # fmt: skip
NEED_KB_EVIDENCE = ("candidate_miss", "no_retrieval")
NO_CLAIM = ("none_seen", "insufficient_trace")
PERMISSION = "permission_violation"
REFUSED = "SELECT trace_id FROM evaluations WHERE metric = 'refusal' AND value = 1"


_SCRATCH: list[tempfile.TemporaryDirectory[str]] = []


def scratch() -> Path:
    """A directory of this run, removed when it ends (``main``)."""
    _SCRATCH.append(tempfile.TemporaryDirectory(prefix="live-bench-"))
    return Path(_SCRATCH[-1].name)


def expected_cause(layers: list[str], scoped: bool, refused: bool) -> str:
    """The live cause a trace should get, from its reference failing layers (see the module doc)."""
    for layer in layers:
        if layer not in LIVE:
            continue
        if layer == "dropped_before_context" and not (refused or "unsupported_claims" in layers):
            continue
        if layer in NEED_KB_EVIDENCE and "evidence_not_in_kb" in layers:
            continue
        if layer == "permission_violation" and not scoped:
            continue
        return layer
    return "none_seen"


def score(pairs: list[tuple[str, str]]) -> dict[str, dict[str, Any]]:
    """Per cause: claimed, expected, correct, precision, recall (None on an empty denominator)."""
    claimed: Counter[str] = Counter()
    wanted: Counter[str] = Counter()
    right: Counter[str] = Counter()
    for want, got in pairs:
        got = "none_seen" if got in NO_CLAIM else got
        claimed[got] += 1
        wanted[want] += 1
        if want == got:
            right[want] += 1
    out = {}
    for cause in (*LIVE, "none_seen"):
        c, w, r = claimed[cause], wanted[cause], right[cause]
        if c or w:
            out[cause] = {"claimed": c, "expected": w, "correct": r,
                          "precision": r / c if c else None, "recall": r / w if w else None}  # fmt: skip
    return out


def print_scores(title: str, scores: dict[str, dict[str, Any]], confusions: Counter[tuple[str, str]]) -> None:
    print(f"\n{title}")
    print(f"{'cause':<24}{'expected':>9}{'claimed':>9}{'correct':>9}{'precision':>11}{'recall':>9}")
    for cause, s in scores.items():
        p = "-" if s["precision"] is None else f"{s['precision']:.3f}"
        r = "-" if s["recall"] is None else f"{s['recall']:.3f}"
        print(f"{cause:<24}{s['expected']:>9}{s['claimed']:>9}{s['correct']:>9}{p:>11}{r:>9}")
    wrong = [(k, n) for k, n in confusions.most_common() if k[0] != k[1]]
    if wrong:
        print("  expected -> claimed (wrong): " + ", ".join(f"{a} -> {b}: {n}" for (a, b), n in wrong))


# -- 1a. the fault-injection traces, through two real servers ------------------------------------


def fault_injection() -> list[tuple[str, str]]:
    from tests.attribution.conftest import serve, wait_evaluated
    from tests.attribution.data import GOLD, KB, PLANTS, TRAPS, jsonl
    from tests.attribution.test_root_causes import SHAPES, emit
    from tests.otel_helpers import http_provider

    def send(with_gold: bool) -> dict[str, list[Any]]:
        out: dict[str, list[Any]] = {}
        for srv in serve(scratch()):
            srv.http.post("/api/v1/kb", content=jsonl(KB))
            if with_gold:
                srv.http.post("/api/v1/gold", content=jsonl(GOLD))
            provider = http_provider(srv.url, batch=True)
            tracer = provider.get_tracer("bench")
            ids: dict[str, str] = {}
            for shape in SHAPES:
                for lang in ("en", "zh"):
                    for cause, plant in PLANTS[lang].items():
                        ids[f"{shape}/{lang}/{cause}"] = emit(tracer, shape, plant, run_id=shape)
                for name, (_, plant, mode, by_query, _) in TRAPS.items():
                    ids[f"{shape}/trap/{name}"] = emit(tracer, shape, plant, mode, by_query, run_id=shape)
            provider.shutdown()
            wait_evaluated(srv, list(ids.values()))
            view = "attribution" if with_gold else "live_attribution"
            got = {r[0]: r[1:] for r in srv.sql(f"SELECT trace_id, root_cause, failing_layers FROM {view}")}
            refused = {r[0] for r in srv.sql(REFUSED)}
            out = {k: [*got[t], t in refused] for k, t in ids.items()}
        return out

    reference, live = send(True), send(False)
    return [
        (expected_cause(reference[k][1], SHAPES[k.split("/")[0]][0] == "agent", reference[k][2]), live[k][0])
        for k in reference
    ]


def seed_examples() -> list[tuple[str, str]]:
    """The two examples of ``examples/`` (seed 000's baseline and corrected runs, seed 002's refund
    traces A-H) as ``tests/attribution/test_examples.py`` sends them, through two real servers."""
    from tests.attribution.conftest import serve, wait_evaluated
    from tests.attribution.test_examples import DATA, REFUND, RUNS, UNRELATED_TEXT, _docs
    from tests.otel_helpers import http_provider
    from tests.tracegen import agent_trace, rag_trace

    def send(with_gold: bool) -> dict[str, list[Any]]:
        out: dict[str, list[Any]] = {}
        for srv in serve(scratch()):
            provider = http_provider(srv.url, batch=True)
            tracer = provider.get_tracer("bench")
            ids: dict[str, tuple[str, bool]] = {}
            for example in ("log-retention", "refund-zh"):
                srv.http.post("/api/v1/kb", content=(DATA / example / "kb.jsonl").read_bytes())
                if with_gold:
                    srv.http.post("/api/v1/gold", content=(DATA / example / "gold.jsonl").read_bytes())
            cases = {}
            content = dict(UNRELATED_TEXT)
            for example in ("log-retention", "refund-zh"):
                cases.update(
                    {c["case_id"]: c for c in map(json.loads, (DATA / example / "gold.jsonl").open())}
                )
                content.update(
                    {d["doc_id"]: d["content"] for d in map(json.loads, (DATA / example / "kb.jsonl").open())}
                )
            for run_id, plan in RUNS.items():
                for cid, (top2, answer, _) in plan.items():
                    tid = rag_trace(tracer, query=cases[cid]["query"], answer=answer,
                                    candidates=_docs(top2, content), case_id=cid, run_id=run_id)  # fmt: skip
                    ids[f"{run_id}/{cid}"] = (tid, False)
            for name, (cid, cands, reranked, answer, retrieve, _) in REFUND.items():
                kwargs: dict[str, Any] = dict(
                    query=cases[cid]["query"], answer=answer, candidates=_docs(cands, content),
                    reranked=_docs(reranked, content) if reranked else None, retrieve=retrieve, case_id=cid,
                    run_id="refund", user_scope=["support"],
                )  # fmt: skip
                tid = agent_trace(tracer, **kwargs) if name == "D" else rag_trace(tracer, **kwargs)
                ids[f"refund/{name}"] = (tid, True)
            provider.shutdown()
            wait_evaluated(srv, [t for t, _ in ids.values()])
            view = "attribution" if with_gold else "live_attribution"
            got = {r[0]: r[1:] for r in srv.sql(f"SELECT trace_id, root_cause, failing_layers FROM {view}")}
            refused = {r[0] for r in srv.sql(REFUSED)}
            out = {k: [*got[t], t in refused, scoped] for k, (t, scoped) in ids.items()}
        return out

    reference, live = send(True), send(False)
    return [
        (expected_cause(reference[k][1], reference[k][3], reference[k][2]), live[k][0]) for k in reference
    ]


# -- 1b and 3. the synthetic traces, in-process ---------------------------------------------------


def synthetic(
    n_traces: int, kb_docs: int, seed: int = 7, batch: int = 250
) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    path = str(scratch() / "bench.duckdb")
    local, _ = build_db(path, n_traces, kb_docs, seed=seed)
    specs = discover()
    configs = evaluator_configs(EvaluationSettings(), specs)
    runner = Runner(specs, configs)
    ids = trace_ids(local)

    def evaluate() -> None:
        sr = StoreRunner(local.store.cursor(), local.write, runner, DEFAULT_SOURCE_KEYS)
        for i in range(0, len(ids), batch):
            sr.evaluate(ids[i : i + batch])

    evaluate()
    cur = local.store.cursor()
    reference = {
        r[0]: r[1] for r in cur.execute("SELECT trace_id, failing_layers FROM attribution").fetchall()
    }
    refused = {r[0] for r in cur.execute(REFUSED).fetchall()}
    local.store.con.execute("DELETE FROM gold_cases")
    evaluate()
    live = {r[0]: r[1:] for r in local.store.cursor().execute(
        "SELECT trace_id, root_cause, failing_layers FROM live_attribution").fetchall()}  # fmt: skip
    pairs = [(expected_cause(reference[t], True, t in refused), live[t][0]) for t in ids]
    # the same with permission left out of both sides: forbidden candidates are common in these
    # traces and, first in the order, hide every other cause
    unmasked = [
        (expected_cause([x for x in reference[t] if x != PERMISSION], True, t in refused),
         next((x for x in live[t][1] if x != PERMISSION), "none_seen"))
        for t in ids
    ]  # fmt: skip

    local.close()
    return pairs, unmasked


def cost(n_traces: int, kb_docs: int, seed: int, batch: int = 250) -> dict[str, float]:
    """Each cheap-tier evaluator's CPU time a trace (µs), on synthetic traces without their gold
    cases that this process has not evaluated before (the lexical checker keeps what it works out
    by text); the first tenth untimed, as a server has read the registry before."""
    path = str(scratch() / "cost.duckdb")
    local, _ = build_db(path, n_traces, kb_docs, seed=seed)
    local.store.con.execute("DELETE FROM gold_cases")
    specs = discover()
    configs = evaluator_configs(EvaluationSettings(), specs)
    runner = Runner(specs, configs)
    ids = trace_ids(local)
    sr = StoreRunner(local.store.cursor(), local.write, runner, DEFAULT_SOURCE_KEYS)
    warm, timed = ids[: len(ids) // 10], ids[len(ids) // 10 :]
    per: dict[str, float] = {n: 0.0 for n in runner.specs}
    for chunk, out in ((warm, dict(per)), (timed, per)):
        for i in range(0, len(chunk), batch):
            inputs, _ = sr.inputs(chunk[i : i + batch])
            with gc_paused():  # as the runner evaluates a batch
                _time_each(runner, configs, inputs, out)
    local.close()
    return {k: v / len(timed) * 1e6 for k, v in per.items()}


def _time_each(runner: Runner, configs: dict[str, Any], inputs: list[Any], per: dict[str, float]) -> None:
    """Each evaluator's CPU time on each input, added to ``per``."""
    for inp in inputs:
        for name, spec in runner.specs.items():
            if spec.needs_case and inp.case is None:
                continue
            t = time.process_time()
            spec.fn(inp, configs[name])
            per[name] += time.process_time() - t


# -- 2. the index ----------------------------------------------------------------------------------


def index_figures(n_docs: int, n_queries: int) -> dict[str, float]:
    rng = random.Random(11)
    kb = make_kb(rng, n_docs)
    t = time.process_time()
    index = RegistryIndex((d["doc_id"], d["content"]) for d in kb)
    build = time.process_time() - t
    questions = [d["_query"] for d in rng.sample(kb, min(n_queries, len(kb)))]
    times = []
    hits = 0
    for q in questions:
        t = time.process_time()
        terms = terms_of(q)
        found = index.search(terms, 10)
        for doc_id, _ in found:
            index.terms(doc_id)
        times.append(time.process_time() - t)
        hits += bool(found)
    times.sort()
    return {
        "docs": n_docs,
        "build_s": build,
        "queries": len(questions),
        "query_ms_p50": statistics.median(times) * 1e3,
        "query_ms_p95": times[int(len(times) * 0.95) - 1] * 1e3,
        "query_ms_max": times[-1] * 1e3,
        "with_hits": hits,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--traces", type=int, default=1000, help="synthetic traces (default 1000)")
    ap.add_argument("--kb-docs", type=int, default=300, help="registry of the synthetic traces")
    ap.add_argument("--seed", type=int, default=7, help="seed of the synthetic traces")
    ap.add_argument("--index-docs", type=int, default=100_000, help="registry size of the index figures")
    ap.add_argument("--queries", type=int, default=1000, help="questions timed against the index")
    ap.add_argument("--skip-servers", action="store_true", help="leave out the fault-injection set")
    args = ap.parse_args(argv)
    results: dict[str, Any] = {}

    if not args.skip_servers:
        pairs = fault_injection()
        results["fault_injection"] = score(pairs)
        print_scores(f"fault-injection traces ({len(pairs)})", results["fault_injection"], Counter(pairs))
        pairs = seed_examples()
        results["seed_examples"] = score(pairs)
        print_scores(f"the examples' traces ({len(pairs)})", results["seed_examples"], Counter(pairs))

    pairs, unmasked = synthetic(args.traces, args.kb_docs, args.seed)
    results["synthetic"] = score(pairs)
    print_scores(
        f"synthetic traces ({len(pairs)}, registry {args.kb_docs})", results["synthetic"], Counter(pairs)
    )
    results["synthetic_without_permission"] = score(unmasked)
    print_scores("the same, permission_violation left out of both sides", results["synthetic_without_permission"],
                 Counter(unmasked))  # fmt: skip
    per = cost(args.traces, args.kb_docs, args.seed + 1)
    rest = sum(v for k, v in per.items() if k != "live_evidence")
    results["cost_us_per_trace"] = {"live_evidence": per.get("live_evidence", 0.0), "rest_of_cheap_tier": rest,
                                    "ratio": per.get("live_evidence", 0.0) / rest if rest else None}  # fmt: skip
    c = results["cost_us_per_trace"]
    print(f"\ncost per trace (no gold case): live_evidence {c['live_evidence']:.0f} µs, the rest of the cheap "
          f"tier {c['rest_of_cheap_tier']:.0f} µs, ratio {c['ratio']:.3f}")  # fmt: skip

    ix = results["index"] = index_figures(args.index_docs, args.queries)
    print(f"\nregistry index, {ix['docs']:,} documents: build {ix['build_s']:.2f} s; a question "
          f"p50 {ix['query_ms_p50']:.2f} ms, p95 {ix['query_ms_p95']:.2f} ms, max {ix['query_ms_max']:.2f} ms "
          f"({ix['with_hits']} of {ix['queries']} with hits)")  # fmt: skip
    out = HERE / "results" / "live_attribution.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(results, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    try:
        raise SystemExit(main())
    finally:
        for d in _SCRATCH:
            d.cleanup()
