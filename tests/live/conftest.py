"""A real server with a config file of the live-traffic tables, and helpers to emit traces to it."""

from __future__ import annotations

import dataclasses
import functools
import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace import TracerProvider

from evaluators.service.scheduler import EvaluationService
from tests.conftest import Server, make_settings
from tests.otel_helpers import http_provider
from tests.served import api_client
from tests.waiting import wait_until

GOLD: dict[str, Any] = {
    "case_id": "c1",
    "query": "How long is the refund window?",
    "evidence": [{"doc_id": "policy", "quote": "30 days"}],
}
DOCS = [{"id": "policy", "content": "Refunds are accepted within 30 days of purchase.", "score": 0.9}]


class LiveServer(Server):
    """``clock``: the evaluation scheduler's clock (``ragfault_core.clock``; the system's by default)."""

    def __init__(self, tmp_path: Path, toml: str, clock: Any = None, **overrides: Any) -> None:
        cfg = tmp_path / "ragfault.toml"
        cfg.write_text(toml, encoding="utf-8")
        settings = make_settings(tmp_path, config_file=str(cfg), **overrides)
        if clock is None:
            super().__init__(settings)
        else:
            self._start_with_clock(settings, clock)
        self.providers: dict[str, TracerProvider] = {}
        r = self.http.post("/api/v1/gold", content=json.dumps(GOLD) + "\n")
        assert r.status_code == 200, r.text

    def _start_with_clock(self, settings: Any, clock: Any) -> None:
        """``Server.__init__`` with the evaluation service built on ``clock``."""

        from collector.components import installed
        from ragfault.server import ServerThread

        # the server's own components, the evaluation service's factory given the clock
        service = functools.partial(EvaluationService, clock=clock)
        components = [
            dataclasses.replace(c, service=service) if c.name == "evaluation" else c for c in installed()
        ]
        self.settings = settings
        self.thread = ServerThread(settings, components)
        self.runtime = self.thread.runtime
        self.thread.start()
        self.url = f"http://127.0.0.1:{settings.http_port}"
        self.grpc_endpoint = f"127.0.0.1:{self.runtime.grpc_port}"
        self.http = api_client(self.url)
        self.clock = clock

    def parked(self) -> None:
        """Until the evaluation loop waits on its clock with no wake pending (a deadline, no timing
        assertion): nothing runs in it until the clock is advanced or it is woken."""
        svc = self.runtime.find(EvaluationService)

        def state() -> dict[str, object]:
            return {"parked": self.clock.parked, "wake": svc._wake.is_set(), "busy": svc._busy}

        wait_until(state, lambda s: s["parked"] and not s["wake"] and not s["busy"],
                   what="the evaluation loop to come to rest", timeout=60, every=0.01)  # fmt: skip

    def settle(self) -> int:
        """Assemble every unassembled trace now, with a settler of its own (the server's is busy in its thread)."""
        from collector.settling.settle import Settler

        cursor = self.runtime.store.cursor()
        settler = Settler(
            cursor, lambda fn: self.runtime.writer.call(fn, timeout=60),
            settle_seconds=1, max_wait_seconds=1,
        )  # fmt: skip
        n = 0
        try:
            while k := settler.run_once(force=True):
                n += k
        finally:
            cursor.close()
        return n

    def tracer(self, service: str = "rag-app") -> Any:
        if service not in self.providers:
            self.providers[service] = http_provider(self.url, service=service)
        return self.providers[service].get_tracer("tests.live")

    def drain(self, timeout: float = 30) -> None:
        """Settle everything now and wait until both tiers are idle (no timing assertion: a deadline)."""
        svc = self.runtime.find(EvaluationService)

        def drained() -> bool:
            self.settle()
            svc.wake()
            # a moment for the woken loop to take the work up (how often it is looked at, no timing)
            time.sleep(0.05)
            return bool(svc.idle() and self.settle() == 0 and svc.idle())

        wait_until(drained, what="evaluation to drain", timeout=timeout, every=0)

    def status(self, trace_id: str, tier: str = "judge") -> tuple[str, str] | None:
        rows = self.sql(
            "SELECT decision, reason FROM eval_status WHERE trace_id = $t AND tier = $tier",
            t=trace_id,
            tier=tier,
        )
        return (rows[0][0], rows[0][1]) if rows else None

    def stop(self) -> None:
        for p in self.providers.values():
            p.shutdown()
        super().stop()


@pytest.fixture
def live(tmp_path: Path) -> Iterator[Callable[[str], LiveServer]]:
    started: list[LiveServer] = []

    def start(toml: str = "", **overrides: Any) -> LiveServer:
        srv = LiveServer(tmp_path, toml, **overrides)
        started.append(srv)
        return srv

    try:
        yield start
    finally:
        for s in started:
            s.stop()
