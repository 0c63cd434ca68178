"""A minimal judge runner: one HTTP call per trace, no verdicts. The soak (``bench/soak.py``) now runs
the real judge tier (``evaluators.judge.service``); this stays for ``tests/live/test_scheduling.py``,
which needs exactly one judge call per judged trace to check load shedding.

It sends each trace's question and answer to an OpenAI-compatible endpoint (table ``[bench_judge]``:
``base_url``, ``model``, ``concurrency``, ``cost_per_1k_input``, ``cost_per_1k_output``) and records
every call in ``judge_calls`` (migration 003) so ``/metrics`` shows judge calls and spend. It writes
no verdicts: the soak measures scheduling, lag and memory, not judge quality.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from typing import Any

import httpx
import pyarrow as pa

from ragfault_core.settings import load_toml


class MinimalJudge:
    def __init__(self, runtime: Any, cfg: dict[str, Any]) -> None:
        self.runtime = runtime
        self.base_url = str(cfg["base_url"]).rstrip("/")
        self.model = str(cfg.get("model", "bench-judge"))
        self.cost_in = float(cfg.get("cost_per_1k_input", 0.00015))
        self.cost_out = float(cfg.get("cost_per_1k_output", 0.0006))
        self.client = httpx.Client(timeout=float(cfg.get("timeout_s", 60)))
        self.pool = ThreadPoolExecutor(int(cfg.get("concurrency", 4)), thread_name_prefix="bench-judge")
        self.cursor = runtime.store.cursor()

    def _call(self, question: str, answer: str) -> dict[str, Any]:
        t0 = time.perf_counter()
        r = self.client.post(
            f"{self.base_url}/chat/completions",
            json={"model": self.model, "messages": [
                {"role": "system", "content": "Split the answer into claims and label each against the context."},
                {"role": "user", "content": f"Question: {question}\nAnswer: {answer}"}]},
        )  # fmt: skip
        r.raise_for_status()
        usage = r.json().get("usage", {})
        i, o = int(usage.get("prompt_tokens", 0)), int(usage.get("completion_tokens", 0))
        return {
            "called_at": datetime.now(UTC).replace(tzinfo=None), "task": "bench", "model": self.model,
            "prompt_version": "bench", "attempt": 1, "status": "ok", "http_status": r.status_code,
            "input_tokens": i, "output_tokens": o, "tokens_estimated": False,
            "cost_usd": i / 1000 * self.cost_in + o / 1000 * self.cost_out,
            "latency_ms": (time.perf_counter() - t0) * 1000, "error": None, "cache_key": None,
        }  # fmt: skip

    def evaluate(self, trace_ids: list[str]) -> int:
        rows = self.cursor.execute(
            "SELECT coalesce(query_text, ''), coalesce(answer_text, '') FROM traces WHERE trace_id IN (SELECT unnest($t))",
            {"t": list(trace_ids)},
        ).fetchall()
        calls = list(self.pool.map(lambda qa: self._call(*qa), rows))
        if calls:
            tbl = pa.Table.from_pylist(calls)
            cols = ", ".join(tbl.column_names)

            def job(con: Any) -> None:
                con.register("_bench_calls", tbl)
                try:
                    con.execute(f"INSERT INTO judge_calls ({cols}) SELECT {cols} FROM _bench_calls")
                finally:
                    con.unregister("_bench_calls")

            self.runtime.writer.call(job, timeout=120)
        return len(calls)

    def close(self) -> None:
        self.pool.shutdown(wait=False)
        self.client.close()


def build_judge_runner(runtime: Any, settings: Any = None) -> MinimalJudge | None:
    cfg = load_toml(runtime.settings.config_file).get("bench_judge")
    return MinimalJudge(runtime, cfg) if cfg else None
