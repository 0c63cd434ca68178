#!/usr/bin/env python
"""Summarize a py-spy raw (collapsed stacks) profile of the ragfault server.

    .venv/bin/python bench/profile_summary.py bench/results/ragfault-profile.txt

Prints, per thread group, the share of samples, and the functions with most inclusive and self
samples. ``bench/ingest.py --profile`` writes the input file. py-spy samples idle threads too (unless
``--idle`` is off, which is py-spy's default: only running threads are sampled).
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from pathlib import Path

_FRAME = re.compile(r"^(?P<fn>.*) \((?P<file>[^()]*?)(?::\d+)?\)$")


def _thread_group(head: str) -> str:
    # "thread (1234): name" -> name without numbers (AnyIO worker threads share one name)
    name = head.split(":", 1)[1].strip() if ":" in head else head
    return re.sub(r"[\d_-]+$", "", name) or name


def _key(frame: str) -> str:
    m = _FRAME.match(frame)
    if not m:
        return frame
    file = m.group("file")
    for marker in ("site-packages/", "python3.11/"):
        if marker in file:
            file = file.split(marker, 1)[1]
    return f"{m.group('fn')} ({file})"


def main(path: str, top: int = 25) -> None:
    total = 0
    threads: Counter[str] = Counter()
    incl: Counter[str] = Counter()
    self_: Counter[str] = Counter()
    for line in Path(path).read_text(encoding="utf-8", errors="replace").splitlines():
        line = line.rstrip("\n")
        if not line:
            continue
        stack, _, n = line.rpartition(" ")
        count = int(n)
        frames = stack.split(";")
        total += count
        group = _thread_group(frames[0])
        threads[group] += count
        seen = set()
        for f in frames[1:]:
            k = _key(f)
            if k not in seen:
                incl[f"{group} | {k}"] += count
                seen.add(k)
        if len(frames) > 1:
            self_[f"{group} | {_key(frames[-1])}"] += count
    print(f"{total} samples")
    print("\nthreads:")
    for name, c in threads.most_common():
        print(f"  {100 * c / total:5.1f}%  {name}")
    print(f"\ninclusive (top {top}):")
    for name, c in incl.most_common(top):
        print(f"  {100 * c / total:5.1f}%  {name}")
    print(f"\nself (top {top}):")
    for name, c in self_.most_common(top):
        print(f"  {100 * c / total:5.1f}%  {name}")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 25)
