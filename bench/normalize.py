#!/usr/bin/env python
"""Convention readers alone: microseconds per span of ``normalize_span``, in process, no server.

Two span sets: ``ingest.py``'s OpenInference RAG traces (a chain, a retriever with 20 documents, a
reranker keeping 5, an LLM call with a ~3 KB prompt) and the Traceloop SDK decorators' traces (a
``@workflow``, a ``@task`` returning 20 documents, a ``@task`` given them and keeping 5, a GenAI chat
call with a ~3 KB prompt). Each set is read ``--repeat`` times; the best pass is printed. Compare
two trees by running it with each on ``PYTHONPATH``, from the tree's root:

    .venv/bin/python bench/normalize.py
    PYTHONPATH=/path/to/other/tree .venv/bin/python /path/to/other/tree/bench/normalize.py
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import ingest  # noqa: E402  (the OpenInference traces of the ingest benchmark)

from collector.normalize import normalize_span  # noqa: E402


def _value(v: Any) -> Any:
    return getattr(v, v.WhichOneof("value"))


def openinference_spans(traces: int, seed: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    return [
        {kv.key: _value(kv.value) for kv in span.attributes}
        for _ in range(traces)
        for span in ingest.rag_trace(rng, 0)
    ]


def traceloop_spans(traces: int) -> list[dict[str, Any]]:
    docs = [
        {
            "id": f"d{i}#0",
            "text": f"passage {i} " * 30,
            "score": 1.0 / (i + 1),
            "metadata": {"doc_id": f"d{i}"},
        }
        for i in range(20)
    ]

    def decorated(kind: str, args: list[Any], kwargs: dict[str, Any], out: Any) -> dict[str, Any]:
        return {
            "traceloop.workflow.name": "answer",
            "traceloop.span.kind": kind,
            "traceloop.entity.name": "step",
            "traceloop.entity.input": json.dumps({"args": args, "kwargs": kwargs}),
            "traceloop.entity.output": json.dumps(out),
            "traceloop.association.properties.session_id": "s-1",
        }

    chat = {
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": "m",
        "traceloop.workflow.name": "answer",
        "gen_ai.input.messages": json.dumps(
            [{"role": "user", "parts": [{"type": "text", "content": "p " * 1500}]}]
        ),
        "gen_ai.output.messages": json.dumps(
            [{"role": "assistant", "parts": [{"type": "text", "content": "a"}]}]
        ),
        "gen_ai.usage.input_tokens": 700,
        "gen_ai.usage.output_tokens": 20,
    }
    one = [
        decorated("workflow", ["What is the refund window?"], {}, "Thirty days."),
        decorated("task", ["What is the refund window?"], {"top_k": 20}, docs),
        decorated("task", [docs], {"budget": 5}, docs[:5]),
        chat,
    ]
    return [dict(s) for _ in range(traces) for s in one]


def best_us_per_span(spans: list[dict[str, Any]], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        for attrs in spans:
            normalize_span(attrs)
        best = min(best, time.perf_counter() - t0)
    return best / len(spans) * 1e6


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--traces", type=int, default=500, help="traces per set (4 spans each)")
    p.add_argument("--repeat", type=int, default=7, help="passes over each set (the best is printed)")
    p.add_argument("--seed", type=int, default=7)
    args = p.parse_args(argv)
    for name, spans in (
        ("openinference", openinference_spans(args.traces, args.seed)),
        ("traceloop-sdk", traceloop_spans(args.traces)),
    ):
        print(
            f"{name}: {best_us_per_span(spans, args.repeat):.1f} us/span ({len(spans)} spans, best of {args.repeat})"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
