"""The judge client and tasks against a local OpenAI-compatible server (real HTTP)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

import pytest

from evaluators.judge.client import CallRecord, JudgeClient, JudgeFailed, JudgeSkipped
from evaluators.judge.judge import Judge, Sentence
from evaluators.judge.settings import JudgeSettings
from tests.clock import ManualClock
from tests.judge.fakellm import FakeLLM
from tests.waiting import wait_equal

CONTEXT = [
    Sentence("年度会员购买后 30 天内可申请退款，按剩余天数计算退款金额；", "refund-policy-2026"),
    Sentence("超过 30 天不支持退款。", "refund-policy-2026"),
]
ANSWER = "7 天内可以全额退款，超过 7 天不支持退款。"


def settings(llm: FakeLLM, **kw: Any) -> JudgeSettings:
    values: dict[str, Any] = {
        "base_url": llm.base_url,
        "model": "judge-test",
        "api_key": "sk-test",
        "headers": {"X-Team": "rag"},
        "backoff_base_s": 0.01,
        "timeout_s": 5,
        "cost_per_1k_input": 0.5,
        "cost_per_1k_output": 1.5,
    }
    values.update(kw)
    return JudgeSettings(**values)


class RecordingClock(ManualClock):
    """A hand-moved clock that also remembers how long each wait asked for."""

    def __init__(self) -> None:
        super().__init__()
        self.asked: list[float] = []

    def wait(self, event: threading.Event, timeout: float) -> bool:
        self.asked.append(timeout)
        return super().wait(event, timeout)


class Rig:
    """A client on a hand-moved clock. By default a retry's pause is only remembered and moves the clock
    by as much (``by_hand=True``: the client's own pause waits on the clock and the test moves it)."""

    def __init__(self, llm: FakeLLM, by_hand: bool = False, **kw: Any) -> None:
        self.records: list[CallRecord] = []
        self.sleeps: list[float] = []
        self.clock = RecordingClock()

        def sleep(s: float) -> None:
            self.sleeps.append(s)
            self.clock.advance(s)

        self.client = JudgeClient(
            settings(llm, **kw),
            record=self.records.append,
            sleep=None if by_hand else sleep,
            clock=self.clock,
        )
        self.judge = Judge(self.client.settings, self.client)

    @property
    def statuses(self) -> list[str]:
        return [r.status for r in self.records]


VERDICTS = {
    "claims": [
        {"text": "7 天内可以全额退款", "verdict": "contradicted", "sentence": "S1"},
        {"text": "超过 7 天不支持退款", "verdict": "contradicted", "sentence": "S2"},
    ]
}


def test_well_formed_verdicts_resolve_the_deciding_sentence(llm: FakeLLM) -> None:
    rig = Rig(llm)
    llm.rules.append(("7 天内可以全额退款", VERDICTS))
    claims = rig.judge.claims("年度会员买了第 20 天，还能退款吗？", ANSWER, CONTEXT)
    assert [c.verdict for c in claims] == ["contradicted", "contradicted"]
    assert claims[0].evidence == CONTEXT[0].text and claims[0].evidence_doc == "refund-policy-2026"
    assert claims[1].evidence == "超过 30 天不支持退款。"
    # the request: model, JSON mode, key and extra header; the numbered context in the prompt
    req, hdr = llm.requests[0], llm.headers[0]
    assert req["model"] == "judge-test" and req["response_format"] == {"type": "json_object"}
    assert hdr["authorization"] == "Bearer sk-test" and hdr["x-team"] == "rag"
    assert "S2: 超过 30 天不支持退款。" in req["messages"][1]["content"]
    # one record with the server's usage and the configured prices
    (rec,) = rig.records
    p, c = llm.usage[0]
    assert (rec.status, rec.input_tokens, rec.output_tokens, rec.tokens_estimated) == ("ok", p, c, False)
    assert rec.cost_usd == pytest.approx(p / 1000 * 0.5 + c / 1000 * 1.5)
    assert (rec.model, rec.prompt_version, rec.task) == ("judge-test", "v1", "claims")
    assert rig.clock.waits == 0  # no rate limit configured: the call was not held back


def test_malformed_json_is_retried_with_a_correction(llm: FakeLLM) -> None:
    rig = Rig(llm)
    llm.script.extend(["malformed", ("reply", VERDICTS)])
    claims = rig.judge.claims("q", ANSWER, CONTEXT)
    assert len(claims) == 2
    assert rig.statuses == ["malformed", "ok"]
    assert llm.calls == 2
    assert "not valid JSON" in llm.requests[1]["messages"][-1]["content"]


def test_invalid_schema_counts_as_malformed_and_retries_run_out(llm: FakeLLM) -> None:
    rig = Rig(llm, max_retries=1)
    bad = {"claims": [{"text": "x", "verdict": "probably"}]}
    llm.script.extend([("reply", bad), ("reply", bad)])
    with pytest.raises(JudgeFailed, match="malformed"):
        rig.judge.claims("q", ANSWER, CONTEXT)
    assert rig.statuses == ["malformed", "malformed"] and llm.calls == 2


def test_timeout_then_retry(llm: FakeLLM) -> None:
    rig = Rig(llm, timeout_s=0.3)
    llm.script.extend([("sleep", 1.5), ("reply", VERDICTS)])
    claims = rig.judge.claims("q", ANSWER, CONTEXT)
    assert len(claims) == 2
    assert rig.statuses == ["timeout", "ok"]


def test_429_honours_retry_after_and_5xx_backs_off(llm: FakeLLM) -> None:
    rig = Rig(llm)
    llm.script.extend([("status", 429, {"Retry-After": "1"}), ("status", 503), ("reply", VERDICTS)])
    rig.judge.claims("q", ANSWER, CONTEXT)
    assert rig.statuses == ["rate_limited", "server_error", "ok"]
    assert [r.http_status for r in rig.records] == [429, 503, 200]
    # Retry-After said 1 s; the 5xx after it waited the second backoff step (0.01 * 2)
    assert rig.sleeps == [1.0, 0.02]


@contextmanager
def calls_in_threads(rig: Rig, n: int) -> Iterator[ThreadPoolExecutor]:
    """Threads for calls the test lets through by moving the clock; when the test fails, the clock
    jumps an hour so that calls still held back return and the pool can close."""
    with ThreadPoolExecutor(n) as pool:
        try:
            yield pool
        except BaseException:
            rig.clock.advance(3600.0)
            raise


def test_retry_pauses_wait_on_the_clients_clock(llm: FakeLLM) -> None:
    rig = Rig(llm, by_hand=True)
    llm.script.extend([("status", 429, {"Retry-After": "1"}), ("status", 503), ("reply", VERDICTS)])
    with calls_in_threads(rig, 1) as pool:
        done = pool.submit(rig.judge.claims, "q", ANSWER, CONTEXT)
        rig.clock.wait_for_waits(1)
        assert llm.calls == 1 and not done.done()  # parked on the clock after the 429
        rig.clock.advance(1.0)
        rig.clock.wait_for_waits(2)
        assert llm.calls == 2
        rig.clock.advance(0.02)
        assert len(done.result(timeout=30)) == 2
    assert rig.clock.asked == [1.0, 0.02]
    assert rig.statuses == ["rate_limited", "server_error", "ok"]


def burst(rig: Rig, arrivals: list[float], n: int) -> list[float]:
    """``n`` refusal calls at once; the clock is moved one interval at a time, and only once the call
    let through last has reached the server. Returns the clock's readings as the calls arrived."""
    interval = rig.client.limiter.interval
    before, waits = len(arrivals), rig.clock.waits
    with calls_in_threads(rig, n) as pool:
        calls = [pool.submit(rig.judge.refusal, f"question {before + i}", "an answer") for i in range(n)]
        wait_equal(lambda: len(arrivals), before + 1, what="the first call at the server")
        rig.clock.wait_for_waits(waits + n - 1)  # the others are held back by the limiter
        assert len(arrivals) == before + 1
        for k in range(1, n):
            rig.clock.advance(interval)
            wait_equal(lambda: len(arrivals), before + 1 + k, what="calls at the server")
        for call in calls:
            call.result(timeout=30)
    return arrivals[before:]


def test_the_rate_limit_spaces_call_starts_and_saves_no_burst(llm: FakeLLM) -> None:
    rig = Rig(llm, requests_per_minute=120)  # one start every 0.5 s
    arrivals: list[float] = []
    llm.responder = lambda user: arrivals.append(rig.clock.monotonic())  # None: the default reply
    t0 = rig.clock.monotonic()
    # four at once: the first starts now, each other one slot after the one before
    assert burst(rig, arrivals, 4) == [t0, t0 + 0.5, t0 + 1.0, t0 + 1.5]
    assert sorted(rig.clock.asked) == [0.5, 1.0, 1.5]
    # a minute idle earns no burst: four at once are spaced exactly as before
    rig.clock.advance(60.0)
    t1 = rig.clock.monotonic()
    assert burst(rig, arrivals, 4) == [t1, t1 + 0.5, t1 + 1.0, t1 + 1.5]
    # a call a quarter second after the last slot waits only the rest of the interval
    rig.clock.advance(0.25)
    rig.clock.asked.clear()
    waits = rig.clock.waits
    with calls_in_threads(rig, 1) as pool:
        call = pool.submit(rig.judge.refusal, "one more", "an answer")
        rig.clock.wait_for_waits(waits + 1)
        rig.clock.advance(0.25)
        call.result(timeout=30)
    assert rig.clock.asked == [0.25] and arrivals[-1] == t1 + 2.0
    assert rig.statuses == ["ok"] * 9


def test_a_4xx_is_not_retried(llm: FakeLLM) -> None:
    rig = Rig(llm)
    llm.script.append(("status", 401))
    with pytest.raises(JudgeFailed, match="http_error"):
        rig.judge.claims("q", ANSWER, CONTEXT)
    assert llm.calls == 1


def test_budget_spent_means_skipped_without_a_call(llm: FakeLLM) -> None:
    rig = Rig(llm, tokens_per_hour=400)
    llm.rules.append(("全额退款", VERDICTS))
    rig.judge.claims("q", ANSWER, CONTEXT)  # about 300 tokens: within budget
    assert llm.calls == 1
    with pytest.raises(JudgeSkipped) as exc:
        rig.judge.claims("another question", ANSWER, CONTEXT)
    assert exc.value.reason == "budget"
    assert llm.calls == 1  # no request was made


def test_cost_budget(llm: FakeLLM) -> None:
    rig = Rig(llm, budget_usd_per_hour=0.0001, cost_per_1k_input=1.0)
    with pytest.raises(JudgeSkipped):
        rig.judge.refusal("q", "a long answer " * 20)
    assert llm.calls == 0


def test_same_input_is_answered_from_the_cache(llm: FakeLLM) -> None:
    rig = Rig(llm)
    llm.rules.append(("全额退款", VERDICTS))
    first = rig.judge.claims("q", ANSWER, CONTEXT)
    again = rig.judge.claims("q", ANSWER, CONTEXT)
    assert first == again and llm.calls == 1
    rig.judge.claims("q", ANSWER, CONTEXT[:1])  # another context: another key
    assert llm.calls == 2
