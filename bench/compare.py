"""Run comparison cost: ``ragfault compare`` on synthetic case results of two runs.

Each case has the metrics a RAG case carries (recall@1/3/5/10, candidate and context recall,
retention, fact coverage, answer support over 3 claims, answerability, a root cause) in six
categories; the comparison computes every metric overall and per category with a 10,000-resample
paired bootstrap. Prints the wall time per case count (the first call also pays pyarrow's imports).

    python bench/compare.py [--cases 100 500 2000] [--resamples 10000]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ragfault.compare import compare_rows  # noqa: E402


def rows(n: int, pass_rate: float, rng: random.Random) -> list[dict[str, Any]]:
    out = []
    for i in range(n):
        out.append({
            "trace_id": f"t{i}", "case_id": f"c{i}", "start_time": "2026-01-01", "category": f"cat{i % 6}",
            "root_cause": "ok" if rng.random() < pass_rate else "candidate_miss",
            "answerability": rng.choice(["answered_answerable", "refused_answerable"]),
            "recall_at": json.dumps({f"recall@{k}": rng.random() for k in (1, 3, 5, 10)}),
            "candidate_recall": rng.random(), "context_recall": rng.random(), "context_retention": rng.random(),
            "fact_coverage": rng.choice([0, 0.5, 1]), "citation_validity": None,
            "answer_support_num": rng.randint(0, 3), "answer_support_den": 3,
        })  # fmt: skip
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--cases", type=int, nargs="+", default=[100, 500, 2000])
    ap.add_argument("--resamples", type=int, default=10_000)
    args = ap.parse_args()
    rng = random.Random(0)
    compare_rows(rows(10, 0.5, rng), rows(10, 0.6, rng), baseline="A", run="B", resamples=10)  # imports
    for n in args.cases:
        a, b = rows(n, 0.6, rng), rows(n, 0.7, rng)
        t0 = time.perf_counter()
        out = compare_rows(a, b, baseline="A", run="B", resamples=args.resamples)
        dt = time.perf_counter() - t0
        print(f"{n:>6} cases  {len(out['metrics'])} metric rows  {args.resamples} resamples  {dt:6.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
