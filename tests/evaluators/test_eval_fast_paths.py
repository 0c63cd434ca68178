"""The evaluation fast paths give the rows of the straightforward versions.

- retrieval: the reference computes every cut-off from scratch (``reference_ndcg`` per k); random
  traces and gold cases are evaluated both ways and the rows compared field by field;
- the write: a batch of traces never evaluated skips looking for earlier verdicts; a batch that
  mixes them moves exactly the earlier rows of the evaluators that ran.
"""

from __future__ import annotations

import math
import random
from typing import Any

from evaluators.builtin import retrieval
from evaluators.eval_input import EvalInput
from tests.evaluators.evidence_builders import case, inp, rag

WORDS = ("refund", "within", "30", "days", "purchase", "members", "export", "data", "7", "licence")


def _content(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randrange(2, 8))) + "."


def _doc(rng: random.Random, pool: list[str]) -> dict[str, Any] | str:
    content = rng.choice(pool)
    if rng.random() < 0.3:
        return content  # no id at all
    doc_id = f"d{rng.randrange(6)}"
    item: dict[str, Any] = {"content": content if rng.random() < 0.9 else None}
    if rng.random() < 0.5:
        item["id"] = f"{doc_id}#c{rng.randrange(3)}"
        item["metadata"] = {"doc_id": doc_id}
    else:
        item["id"] = doc_id
    return item


def _evidence(rng: random.Random, pool: list[str]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for _ in range(rng.randrange(0, 4)):
        items = []
        for _ in range(rng.randrange(1, 3)):
            item: dict[str, Any] = {"grade": rng.randrange(0, 4)}
            r = rng.random()
            if r < 0.4:
                item["doc_id"] = f"d{rng.randrange(6)}"
            elif r < 0.6:
                item["chunk_id"] = f"d{rng.randrange(6)}#c{rng.randrange(3)}"
            if r >= 0.3 or rng.random() < 0.5:
                words = rng.choice(pool).rstrip(".").split()
                a = rng.randrange(len(words))
                item["quote"] = " ".join(words[a : a + rng.randrange(1, 4)])
            if "doc_id" not in item and "chunk_id" not in item and "quote" not in item:
                item["quote"] = rng.choice(WORDS)
            items.append(item)
        out.append(items[0] if len(items) == 1 else {"any_of": items})
    return out


def random_input(rng: random.Random) -> EvalInput:
    pool = [_content(rng) for _ in range(rng.randrange(2, 10))]
    n = rng.randrange(0, 14)
    cands = [_doc(rng, pool) for _ in range(n)] if rng.random() < 0.9 else None
    extra = [
        (f"ret{j}", [_doc(rng, pool) for _ in range(rng.randrange(0, 8))]) for j in range(rng.randrange(0, 3))
    ]
    reranked = cands[: rng.randrange(0, 6)] if cands and rng.random() < 0.5 else None
    trace = rag(candidates=cands, reranked=reranked, extra_steps=extra if cands is not None else [])
    gold = case(_evidence(rng, pool)) if rng.random() < 0.95 else None
    return inp(trace, gold)


# --- retrieval: the @k metrics from the ranks of first matches ------------------------------------


def reference_ndcg(new_units_by_rank: list[set[int]], grades: dict[int, int], k: int) -> float:
    """nDCG@k from the units first matched at each rank: gains 2^grade−1, log2 discount, ideal from
    all gold units."""
    dcg = 0.0
    for i, units in enumerate(new_units_by_rank[:k]):
        if units:
            dcg += max(2 ** grades[u] - 1 for u in units) / math.log2(i + 2)
    ideal = sorted((2**g - 1 for g in grades.values()), reverse=True)[:k]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg > 0 else 0.0


def expected_ratios(inp: EvalInput, ks: tuple[int, ...]) -> dict[tuple[str, str | None], tuple[float, float]]:
    """(numerator, denominator) of every @k, MRR and macro row, each cut-off computed from scratch
    from the units first matched at each rank (``reference_ndcg`` per k)."""
    grades = {u.index: u.grade for u in inp.matching.units}
    n_units = len(grades)
    want: dict[tuple[str, str | None], tuple[float, float]] = {}
    union = {k: set[int]() for k in ks}
    macro: dict[str, list[float]] = {n: [] for k in ks for n in (f"precision@{k}", f"ndcg@{k}")}
    macro["mrr"] = []
    for step, docs in inp.trace.candidates_by_step:
        firsts: list[set[int]] = []
        for d in docs:
            firsts.append(set(inp.matching.units_of_doc(d)).difference(*firsts))
        sid = step.span_id
        for k in ks:
            found = set().union(*firsts[:k])
            union[k] |= found
            nd = reference_ndcg(firsts, grades, k)
            want[f"recall@{k}", sid] = (len(found), n_units)
            want[f"hit@{k}", sid] = (int(bool(found)), 1)
            want[f"precision@{k}", sid] = (len(found), k)
            want[f"ndcg@{k}", sid] = (nd, 1)
            macro[f"precision@{k}"].append(len(found) / k)
            macro[f"ndcg@{k}"].append(nd)
        rank = next((i + 1 for i, here in enumerate(firsts) if here), None)
        want["mrr", sid] = (1.0 / rank if rank else 0.0, 1)
        macro["mrr"].append(1.0 / rank if rank else 0.0)
    for k in ks:
        want[f"recall@{k}", None] = (len(union[k]), n_units)
        want[f"hit@{k}", None] = (int(bool(union[k])), 1)
    for name, values in macro.items():
        want[name, None] = (sum(values), len(values))
    return want


def twice(seed: int) -> tuple[EvalInput, EvalInput]:
    """Two separate inputs of the same random trace (no per-trace cache shared between them)."""
    return random_input(random.Random(seed)), random_input(random.Random(seed))


def test_retrieval_equals_reference() -> None:
    rng = random.Random(3)
    for seed in range(600):
        ks = tuple(rng.sample((1, 2, 3, 5, 10, 20), rng.randrange(1, 5)))
        config = retrieval.Config(ks=ks)
        fast, plain = twice(seed)
        rows = retrieval.evaluate(fast, config)
        if plain.case is None or not plain.matching.units:
            assert all(r.status == "not_applicable" for r in rows)
            continue
        want = expected_ratios(plain, config.ks)
        got = {
            (r.metric, r.span_id): (r.numerator, r.denominator)
            for r in rows
            if r.metric != "candidate_recall"
        }
        assert got == want, seed


# --- the write: earlier verdicts move to history only for traces evaluated before -----------------


def _batch(trace_ids: list[str], evaluators: list[str], tag: str) -> Any:
    from datetime import datetime

    import pyarrow as pa

    from evaluators.service.runner import EVAL_SCHEMA, LOG_SCHEMA, EvalTables

    now = datetime(2026, 1, 1)
    rows = [(t, e) for t in trace_ids for e in evaluators]
    cols: dict[str, list[Any]] = {f.name: [None] * len(rows) for f in EVAL_SCHEMA}
    cols["trace_id"] = [t for t, _ in rows]
    cols["evaluator"] = [e for _, e in rows]
    cols["metric"] = [f"{e}-{tag}" for _, e in rows]
    cols["status"] = ["ok"] * len(rows)
    cols["evaluator_version"] = ["1"] * len(rows)
    cols["tier"] = ["cheap"] * len(rows)
    cols["generation"] = [1] * len(rows)
    cols["evaluated_at"] = [now] * len(rows)
    evals = pa.table([pa.array(cols[f.name], f.type) for f in EVAL_SCHEMA], schema=EVAL_SCHEMA)
    log = pa.table([pa.array([], f.type) for f in LOG_SCHEMA], schema=LOG_SCHEMA)
    ran = pa.table({"trace_id": [t for t, _ in rows], "evaluator": [e for _, e in rows]})
    done = pa.table({"trace_id": pa.array(trace_ids, pa.string())})
    return EvalTables(evals, log, ran, done, {}), now


def test_history_moves_exactly_the_earlier_verdicts(tmp_path: Any) -> None:
    """A batch of traces never evaluated skips the history move; a batch mixing new traces and
    traces evaluated before moves the earlier rows of the evaluators that ran, and only those."""
    from evaluators.service.runner import write_job
    from ragfault.local import LocalStore

    local = LocalStore(str(tmp_path / "h.duckdb"))
    try:
        con = local.store.con
        con.execute("INSERT INTO traces (trace_id) SELECT 't' || i FROM range(4) r(i)")
        out, now = _batch(["t0", "t1"], ["a", "b"], "first")
        write_job(out, now)(con)
        assert con.execute("SELECT count(*) FROM evaluation_history").fetchall() == [(0,)]
        out, now = _batch(["t1", "t2"], ["a"], "second")  # t1 evaluated before, t2 not
        write_job(out, now)(con)
        history = con.execute(
            "SELECT trace_id, evaluator, metric FROM evaluation_history ORDER BY ALL"
        ).fetchall()
        assert history == [("t1", "a", "a-first")]
        current = con.execute("SELECT trace_id, evaluator, metric FROM evaluations ORDER BY ALL").fetchall()
        assert current == [
            ("t0", "a", "a-first"), ("t0", "b", "b-first"), ("t1", "a", "a-second"), ("t1", "b", "b-first"),
            ("t2", "a", "a-second"),
        ]  # fmt: skip
        gens = con.execute("SELECT trace_id, eval_generation FROM traces ORDER BY ALL").fetchall()
        assert gens == [("t0", 1), ("t1", 2), ("t2", 1), ("t3", 0)]
    finally:
        local.close()
