"""An OpenAI-compatible chat client for the judge: strict JSON out, retries, budget, one record per call.

Errors, as the judge evaluators see them::

    JudgeError
    ├── JudgeSkipped   no call was made (budget spent): the metric is written ``skipped`` with the reason
    └── JudgeFailed    the calls were made and failed (retries exhausted, 4xx): the metric is ``error``

Retried with exponential backoff: malformed or invalid JSON, 429 (``Retry-After`` honoured, capped by
``backoff_max_s``), 5xx, timeouts and transport errors. Every HTTP attempt — the failed ones too — is
a ``CallRecord`` handed to ``record`` (the store writes them to ``judge_calls``).

httpx is used rather than urllib for its pooled, thread-safe client and separate connect/read
timeouts; it is one small pure-Python dependency that the test suite already needed.
"""

from __future__ import annotations

import email.utils
import json
import math
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, TypeVar

import httpx
from pydantic import BaseModel, ValidationError

from evaluators.judge.settings import JudgeSettings
from ragfault_core.clock import Clock, SystemClock

T = TypeVar("T", bound=BaseModel)


class JudgeError(Exception):
    """Base of the judge's errors."""


class JudgeSkipped(JudgeError):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class JudgeFailed(JudgeError):
    pass


@dataclass(frozen=True)
class CallRecord:
    called_at: datetime
    task: str
    model: str
    prompt_version: str
    attempt: int
    status: str
    http_status: int | None
    input_tokens: int
    output_tokens: int
    tokens_estimated: bool
    cost_usd: float
    latency_ms: float
    error: str | None = None
    cache_key: str | None = None


def estimate_tokens(text: str) -> int:
    """The rule used when a server reports no usage: one token per four characters."""
    return max(1, (len(text) + 3) // 4)


class Budget:
    """Tokens and dollars spent in the rolling last hour; thread-safe."""

    def __init__(
        self, tokens_per_hour: int | None, usd_per_hour: float | None, clock: Callable[[], float] = time.time
    ) -> None:
        self.tokens_per_hour = tokens_per_hour
        self.usd_per_hour = usd_per_hour
        self.clock = clock
        self._spent: deque[tuple[float, int, float]] = deque()
        self._lock = threading.Lock()

    def add(self, tokens: int, cost: float, at: float | None = None) -> None:
        with self._lock:
            self._spent.append((self.clock() if at is None else at, tokens, cost))

    def _window(self) -> tuple[int, float]:
        cutoff = self.clock() - 3600
        while self._spent and self._spent[0][0] < cutoff:
            self._spent.popleft()
        return sum(t for _, t, _ in self._spent), sum(c for _, _, c in self._spent)

    def used(self) -> tuple[int, float]:
        with self._lock:
            return self._window()

    def check(self, tokens: int, cost: float) -> str | None:
        """Why a call of about this size may not be made now (None when it may)."""
        with self._lock:
            used_t, used_c = self._window()
        if self.tokens_per_hour is not None and used_t + tokens > self.tokens_per_hour:
            return "budget"
        if self.usd_per_hour is not None and used_c + cost > self.usd_per_hour:
            return "budget"
        return None


class RateLimiter:
    """At most ``per_minute`` call starts per minute, evenly spaced.

    Each start takes the next free slot, one interval after the one before it, so time left idle is not
    saved up for a burst later. Slots are read from and waited out on ``clock`` (the machine's by
    default) so that a test moves time by hand instead of waiting for it.
    """

    def __init__(self, per_minute: float | None, clock: Clock | None = None) -> None:
        self.interval = 60.0 / per_minute if per_minute else 0.0
        self.clock: Clock = clock if clock is not None else SystemClock()
        self._next = -math.inf  # the first start is never held back, whatever the clock's origin
        self._never = threading.Event()  # waits run to their timeout: nothing sets it
        self._lock = threading.Lock()

    def wait(self) -> None:
        """Block until this caller's slot has come."""
        if not self.interval:
            return
        with self._lock:
            now = self.clock.monotonic()
            start = max(now, self._next)
            self._next = start + self.interval
        if start > now:
            self.clock.wait(self._never, start - now)


def _retry_after(value: str | None) -> float | None:
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


def _extract_json(text: str) -> Any:
    """The JSON object in a reply; tolerates a ```json fence, nothing else."""
    s = text.strip()
    if s.startswith("```"):
        s = s.split("\n", 1)[1] if "\n" in s else ""
        s = s.rsplit("```", 1)[0]
    return json.loads(s)


class JudgeClient:
    def __init__(
        self,
        settings: JudgeSettings,
        record: Callable[[CallRecord], None] | None = None,
        budget: Budget | None = None,
        sleep: Callable[[float], None] | None = None,
        transport: httpx.BaseTransport | None = None,
        clock: Clock | None = None,
    ) -> None:
        """``clock`` paces the calls (``requests_per_minute``) and, unless ``sleep`` is given, times the
        pauses between retries: the machine's clock by default, one moved by hand in a test."""
        self.settings = settings
        self.record = record or (lambda r: None)
        self.budget = budget or Budget(settings.tokens_per_hour, settings.budget_usd_per_hour)
        self.clock: Clock = clock if clock is not None else SystemClock()
        self.limiter = RateLimiter(settings.requests_per_minute, self.clock)
        self.sleep: Callable[[float], None] = sleep if sleep is not None else self._pause
        self._never = threading.Event()  # a retry's pause runs to its end: nothing sets it
        self._slots = threading.BoundedSemaphore(settings.concurrency)
        headers = {"Content-Type": "application/json", **settings.headers}
        key = settings.key()
        if key:
            headers["Authorization"] = f"Bearer {key}"
        self.http = httpx.Client(
            base_url=settings.base_url.rstrip("/") + "/",
            headers=headers,
            timeout=httpx.Timeout(settings.timeout_s, connect=min(10.0, settings.timeout_s)),
            transport=transport,
        )

    def _pause(self, seconds: float) -> None:
        """A retry's pause, waited out on the client's clock."""
        self.clock.wait(self._never, seconds)

    def close(self) -> None:
        self.http.close()

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        s = self.settings
        return input_tokens / 1000 * s.cost_per_1k_input + output_tokens / 1000 * s.cost_per_1k_output

    def complete(
        self, task: str, messages: list[dict[str, str]], schema: type[T], cache_key: str | None = None
    ) -> T:
        """One validated answer of the judge; raises JudgeSkipped before any call when over budget."""
        s = self.settings
        prompt_chars = sum(len(m["content"]) for m in messages)
        est_in = estimate_tokens("x" * prompt_chars)
        body: dict[str, Any] = {
            "model": s.model,
            "messages": list(messages),
            "temperature": s.temperature,
            "max_tokens": s.max_output_tokens,
        }
        if s.json_mode:
            body["response_format"] = {"type": "json_object"}
        last_error = "no attempt"
        for attempt in range(1, s.max_retries + 2):
            reason = self.budget.check(est_in, self.cost(est_in, 0))
            if reason:
                raise JudgeSkipped(reason)
            self.limiter.wait()
            wait: float | None = None
            with self._slots:
                t0 = time.perf_counter()
                status, http_status, text, usage, error, retry_after = self._post(body)
                latency = (time.perf_counter() - t0) * 1000
            in_tok = usage.get("prompt_tokens") if usage else None
            out_tok = usage.get("completion_tokens") if usage else None
            estimated = in_tok is None or out_tok is None
            if in_tok is None:
                in_tok = est_in if http_status is not None and http_status < 400 else 0
            if out_tok is None:
                out_tok = estimate_tokens(text) if text else 0
            cost = self.cost(in_tok, out_tok)
            self.budget.add(in_tok + out_tok, cost)
            parsed: T | None = None
            if status == "ok":
                try:
                    parsed = schema.model_validate(_extract_json(text or ""))
                except (ValueError, ValidationError) as exc:
                    status, error = "malformed", f"{type(exc).__name__}: {str(exc)[:300]}"
            self.record(CallRecord(
                datetime.now(UTC).replace(tzinfo=None), task, s.model, s.prompt_version, attempt, status,
                http_status, in_tok, out_tok, estimated, cost, latency, error, cache_key,
            ))  # fmt: skip
            if parsed is not None:
                return parsed
            last_error = f"{status}: {error}"
            if status in ("http_error",):
                break
            if status == "malformed" and attempt == 1:
                # Say what was wrong once; the retry is usually enough for a small model.
                body["messages"] = [
                    *messages,
                    {
                        "role": "user",
                        "content": "Your last reply was not valid JSON "
                        "for the schema. Reply with the JSON object only.",
                    },
                ]
            if status == "rate_limited":
                wait = retry_after
            if attempt <= s.max_retries:
                backoff = min(s.backoff_max_s, s.backoff_base_s * (2 ** (attempt - 1)))
                self.sleep(min(s.backoff_max_s, wait) if wait is not None else backoff)
        raise JudgeFailed(f"judge {task} failed after {attempt} attempt(s): {last_error}")

    def _post(
        self, body: dict[str, Any]
    ) -> tuple[str, int | None, str | None, dict[str, Any] | None, str | None, float | None]:
        """(status, http status, content, usage, error, retry-after seconds) of one HTTP attempt."""
        try:
            resp = self.http.post("chat/completions", json=body)
        except httpx.TimeoutException as exc:
            return "timeout", None, None, None, type(exc).__name__, None
        except httpx.HTTPError as exc:
            return "transport_error", None, None, None, f"{type(exc).__name__}: {exc}", None
        code = resp.status_code
        if code == 429:
            return (
                "rate_limited",
                code,
                None,
                None,
                resp.text[:300],
                _retry_after(resp.headers.get("retry-after")),
            )
        if code >= 500:
            return "server_error", code, None, None, resp.text[:300], None
        if code >= 400:
            return "http_error", code, None, None, resp.text[:300], None
        try:
            data = resp.json()
            content = data["choices"][0]["message"]["content"]
            usage = data.get("usage") or None
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            return (
                "malformed",
                code,
                resp.text[:2000],
                None,
                f"not a chat completion: {type(exc).__name__}",
                None,
            )
        if not isinstance(content, str):
            return "malformed", code, None, usage, "message content is not a string", None
        return "ok", code, content, usage, None, None
