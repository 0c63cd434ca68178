"""The IR metrics of evaluators/builtin/retrieval.py agree with ranx on random qrels and runs.

Each relevant document is one evidence unit ``{doc_id, grade}``; a run is a ranked list of distinct
document ids (relevant and not), recorded as the candidates of one retrieval step. Compared per
query with tolerance 1e-9, for k in the default cut-offs (1, 3, 5, 10):

| ragfault      | ranx              | convention (both)                                                 |
|---------------|-------------------|-------------------------------------------------------------------|
| recall@k      | recall@k          | relevant in top k / all relevant                                  |
| precision@k   | precision@k       | relevant in top k / k, also when fewer than k were retrieved      |
| hit@k         | hit_rate@k        | 1 when any relevant document is in the top k                      |
| mrr           | mrr               | 1 / rank of the first relevant document over the whole run, else 0|
| ndcg@k        | ndcg_burges@k     | gains 2^grade - 1, log2 discount, ideal from all judged documents |
| ndcg@k binary | ndcg@k            | with grades 0/1 equal to trec_eval ndcg_cut (ranx's ndcg)          |

Deliberate difference, kept out of the generated data: ranx treats a judgment of relevance 0 as
not relevant, while ragfault counts every gold evidence unit — a grade-0 unit is still a unit for
recall, hit, precision and MRR (its nDCG gain is 0). Grades are drawn from 1..3 here.
"""

from __future__ import annotations

import math
import os

# ranx's metrics are numba functions; compiling them took 50–165 s of every run (a fresh
# environment has no compile cache), while interpreting them on these few-document queries takes
# about a second. Same code, same float64 arithmetic: only the compilation is skipped.
os.environ.setdefault("NUMBA_DISABLE_JIT", "1")

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from ranx import Qrels, Run, evaluate  # noqa: E402

from evaluators.builtin import retrieval  # noqa: E402
from tests.evaluators.evidence_builders import case, inp, one, rag  # noqa: E402

KS = (1, 3, 5, 10)
CFG = retrieval.Config(ks=KS)


@st.composite
def query(draw, graded: bool):
    n_rel = draw(st.integers(1, 6))
    n_other = draw(st.integers(0, 8))
    relevant = {f"r{i}": (draw(st.integers(1, 3)) if graded else 1) for i in range(n_rel)}
    pool = list(relevant) + [f"n{i}" for i in range(n_other)]
    ranked = draw(st.permutations(pool))
    size = draw(st.integers(1, len(pool)))
    return relevant, list(ranked[:size])


def ours(relevant: dict[str, int], ranked: list[str]) -> dict[str, float]:
    gold = case([{"doc_id": d, "grade": g} for d, g in relevant.items()])
    trace = rag(candidates=[{"id": d, "content": f"text of document {d}"} for d in ranked])
    ms = retrieval.evaluate(inp(trace, gold), CFG)
    out = {"mrr": one(ms, "mrr", "ret").value}
    for k in KS:
        for name in ("recall", "precision", "hit", "ndcg"):
            out[f"{name}@{k}"] = one(ms, f"{name}@{k}", "ret").value
    return out


def theirs(queries: list[tuple[dict[str, int], list[str]]]) -> dict[str, dict[str, float]]:
    qrels = Qrels({f"q{i}": dict(rel) for i, (rel, _) in enumerate(queries)})
    run = Run({f"q{i}": {d: float(len(r) - j) for j, d in enumerate(r)} for i, (_, r) in enumerate(queries)})
    names = {"mrr": "mrr"}
    for k in KS:
        names |= {
            f"recall@{k}": f"recall@{k}",
            f"precision@{k}": f"precision@{k}",
            f"hit@{k}": f"hit_rate@{k}",
        }
        names[f"ndcg@{k}"] = f"ndcg_burges@{k}"
        names[f"trec_ndcg@{k}"] = f"ndcg@{k}"
    scores = evaluate(qrels, run, list(names.values()), return_mean=False, make_comparable=True)
    return {
        ours_name: {f"q{i}": float(scores[ranx_name][i]) for i in range(len(queries))}
        for ours_name, ranx_name in names.items()
    }


def compare(queries, binary: bool) -> None:
    ref = theirs(queries)
    for i, (relevant, ranked) in enumerate(queries):
        mine = ours(relevant, ranked)
        for name, value in mine.items():
            expected = ref[name][f"q{i}"]
            assert math.isclose(value, expected, rel_tol=0, abs_tol=1e-9), (
                name,
                relevant,
                ranked,
                value,
                expected,
            )
        if binary:
            for k in KS:
                assert math.isclose(mine[f"ndcg@{k}"], ref[f"trec_ndcg@{k}"][f"q{i}"], abs_tol=1e-9)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(query(graded=True), min_size=1, max_size=5))
def test_graded_relevance_agrees_with_ranx(queries):
    compare(queries, binary=False)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(query(graded=False), min_size=1, max_size=5))
def test_binary_relevance_agrees_with_ranx_and_trec_ndcg_cut(queries):
    compare(queries, binary=True)


def test_a_known_graded_example():
    # relevant a (grade 2) at rank 3, b (grade 1) missing; ranx says ndcg_burges@3 = 0.5 * 3 / 3.63...
    relevant, ranked = {"a": 2, "b": 1}, ["x", "y", "a"]
    mine = ours(relevant, ranked)
    expected = (3 / math.log2(4)) / (3 + 1 / math.log2(3))
    assert math.isclose(mine["ndcg@3"], expected, abs_tol=1e-12)
    assert math.isclose(theirs([(relevant, ranked)])["ndcg@3"]["q0"], expected, abs_tol=1e-9)
    assert (mine["mrr"], mine["recall@3"], mine["precision@3"], mine["hit@1"]) == (1 / 3, 0.5, 1 / 3, 0.0)
