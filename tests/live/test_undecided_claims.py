"""Claims the lexical tier leaves undecided go to the judge (issue 46): a real server with a
``[judge]`` table pointing at the local OpenAI-compatible server, real OTel traces over HTTP, and the
sampler's ``undecided_claims`` trigger selecting the trace although the production rate is 0."""

from __future__ import annotations

import json
from typing import Any

from tests.live.conftest import DOCS
from tests.llm_server import LLMServer, message_text
from tests.tracegen import rag_trace

UNDECIDED = "Refunds of annual plans are accepted within 30 days."  # the context says nothing of plans
FAITHFUL = "Refunds are accepted within 30 days of purchase."
QUERY = "How long is the refund window?"


def _judge(messages: list[dict[str, Any]]) -> str:
    """The judge's replies: the claims prompt gets one claim labelled unsupported; any other judge
    prompt (refusal) a plain answer."""
    text = "\n".join(message_text(m) for m in messages)
    if "ANSWER:" in text:
        return json.dumps({"claims": [{"text": UNDECIDED, "verdict": "unsupported", "sentence": None}]})
    return json.dumps({"label": "answered", "reason": "states a fact"})


def _rows(srv: Any, trace_id: str, tier: str) -> dict[str, tuple[Any, ...]]:
    rows = srv.sql(
        "SELECT metric, status, numerator, denominator, reason, details FROM evaluations "
        "WHERE trace_id = $t AND tier = $tier AND metric LIKE '%answer_support%'",
        t=trace_id,
        tier=tier,
    )
    return {r[0]: (r[1], r[2], r[3], r[4], json.loads(r[5]) if r[5] else None) for r in rows}


def test_undecided_claims_reach_the_judge_and_its_verdicts_fill_them(live) -> None:
    with LLMServer(_judge) as llm:
        srv = live(
            "[sampling]\nproduction_rate = 0.0\n"
            f'[judge]\nbase_url = "{llm.base_url}"\nmodel = "test-model"\nmax_retries = 0\n'
        )
        tr = srv.tracer()
        undecided = rag_trace(tr, query=QUERY, answer=UNDECIDED, candidates=DOCS)
        decided = rag_trace(tr, query=QUERY, answer=FAITHFUL, candidates=DOCS)
        srv.drain()
        prompts = [message_text(m) for r in llm.requests for m in r.get("messages", [])]

    # the cheap tier: the claim counts neither way, and the row saying so is there for the sampler
    cheap = _rows(srv, undecided, "cheap")
    status, num, den, reason, details = cheap["answer_support"]
    assert (status, num, den, reason) == ("not_applicable", None, None, "all claims undecided")
    assert details["undecided"] == 1 and [c["verdict"] for c in details["claims"]] == ["undecided"]
    assert cheap["answer_support_undecided"][:3] == ("ok", 1, 1)
    assert _rows(srv, decided, "cheap")["answer_support"][:3] == ("ok", 1, 1)
    assert "answer_support_undecided" not in _rows(srv, decided, "cheap")

    # the sampler sends the undecided trace to the judge over a zero rate; the decided one stays out
    assert srv.status(undecided) == ("evaluated", "trigger:undecided_claims")
    assert srv.status(decided) == ("sampled_out", "production rate 0")
    claim_prompts = [p for p in prompts if "ANSWER:" in p]
    assert len(claim_prompts) == 1 and UNDECIDED in claim_prompts[0].split("ANSWER:", 1)[1]

    # and the judge's verdict fills the claim
    status, num, den, _, details = _rows(srv, undecided, "judge")["judge_answer_support"]
    assert (status, num, den) == ("ok", 0, 1)
    assert [(c["claim"], c["label"]) for c in details["items"]] == [(UNDECIDED, "unsupported")]
