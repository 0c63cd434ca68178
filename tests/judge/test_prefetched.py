"""The judge tier's runner hands out results computed ahead instead of calling the judge again."""

from __future__ import annotations

from evaluators.eval_input import EvalInput
from evaluators.judge.service import _Prefetched
from evaluators.metric import Metric
from evaluators.service.runner import Runner
from evaluators.spec import EvaluatorSpec, NoConfig
from tests.evaluators.evidence_builders import inp, rag

CALLS: list[str] = []


def judged(i: EvalInput, config: NoConfig) -> list[Metric]:
    CALLS.append(i.trace.trace_id)
    return [Metric("a", value=1.0), Metric("b", value=0.0)]


SPEC = EvaluatorSpec(name="j", version="1", fn=judged, tier="judge", description="test")


def test_prefetched_results_are_handed_out_grouped_and_only_once() -> None:
    runner = _Prefetched(Runner({"j": SPEC}, {"j": NoConfig()}, tier="judge"))
    x = inp(rag(candidates=["a"]))
    ahead = runner.inner.run(x)
    assert len(CALLS) == 1
    runner.results[id(x)] = ahead
    assert runner.run_grouped(x) == [(SPEC, [m for _, m in ahead])]
    assert len(CALLS) == 1  # not called again
    assert runner.run_grouped(x) == [(SPEC, [Metric("a", value=1.0), Metric("b", value=0.0)])]
    assert len(CALLS) == 2  # nothing left ahead: evaluated now
