"""``live_attribution`` takes the judge's verdict on the answer's claims where the judge scored the
trace, over the lexical tier's, and says so in ``basis``: a real server with a ``[judge]`` table
pointing at the local OpenAI-compatible server, real OTel traces over HTTP, no gold case."""

from __future__ import annotations

import json
from typing import Any

from tests.live.conftest import DOCS
from tests.llm_server import LLMServer, message_text
from tests.tracegen import rag_trace

QUERY = "What is the refund window for a purchase?"  # not the live fixture's gold question
WRONG = "Refunds are accepted within 60 days of purchase."  # the lexical tier: contradicted
FAITHFUL = "Refunds are accepted within 30 days of purchase."  # the lexical tier: supported


def _judge(messages: list[dict[str, Any]]) -> str:
    """The judge disagrees with the lexical tier on both answers; other judge prompts get a label."""
    text = "\n".join(message_text(m) for m in messages)
    if "ANSWER:" in text:
        answer = text.split("ANSWER:", 1)[1]
        claim = WRONG if "60 days" in answer else FAITHFUL
        verdict = "supported" if claim == WRONG else "unsupported"
        return json.dumps({"claims": [{"text": claim, "verdict": verdict, "sentence": DOCS[0]["content"]}]})
    return json.dumps({"label": "answered", "reason": "states a fact"})


def test_the_judge_confirms_or_refutes_the_unsupported_claims(live) -> None:
    with LLMServer(_judge) as llm:
        srv = live(
            "[sampling]\nproduction_rate = 1.0\n"
            f'[judge]\nbase_url = "{llm.base_url}"\nmodel = "test-model"\nmax_retries = 0\n'
        )
        tr = srv.tracer()
        wrong = rag_trace(tr, query=QUERY, answer=WRONG, candidates=DOCS)
        faithful = rag_trace(tr, query=QUERY, answer=FAITHFUL, candidates=DOCS)
        srv.drain()

    def row(trace_id: str) -> tuple[str, list[str], str, dict[str, Any]]:
        root, layers, basis, evidence = srv.sql(
            "SELECT root_cause, failing_layers, basis, evidence FROM live_attribution WHERE trace_id = $t",
            t=trace_id,
        )[0]
        return root, layers, basis, json.loads(evidence)

    def passed(trace_id: str, metric: str) -> bool:
        return bool(
            srv.scalar(
                "SELECT passed FROM evaluations WHERE trace_id = $t AND metric = $m", t=trace_id, m=metric
            )
        )

    # the lexical tier and the judge disagree on both traces
    assert not passed(wrong, "answer_support") and passed(wrong, "judge_answer_support")
    assert passed(faithful, "answer_support") and not passed(faithful, "judge_answer_support")
    # the judge refutes the lexical suspicion: nothing is claimed
    assert row(wrong)[:3] == ("none_seen", [], "trace")
    # the judge finds what the lexical tier did not: its verdict, with its details as the evidence
    root, layers, basis, evidence = row(faithful)
    assert (root, layers, basis) == ("unsupported_claims", ["unsupported_claims"], "judge")
    assert FAITHFUL in json.dumps(evidence["unsupported_claims"])
