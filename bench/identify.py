#!/usr/bin/env python
"""Identifying documents by content against a large registry: ``ContentIndex`` against a scan.

A retrieved document without an id is named by the first registry document whose normalized text
contains it or is contained in it (``KnowledgeBase.identify``). This builds registries of synthetic
80-word documents (``--docs``, e.g. 400,10000,100000), then for each measures:

- building the index (once per registry version and process, on the first look-up by content) and
  the memory it holds (``tracemalloc``, a separate build);
- one look-up of a text not seen before, by the index and by comparing with every registry text:
  pieces of registry documents (200 and 30 characters), texts found nowhere, and texts holding a
  whole registry document. Both must give the same answers.

    .venv/bin/python bench/identify.py --docs 400,10000,100000
"""

from __future__ import annotations

import argparse
import random
import string
import sys
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evaluators.content_index import ContentIndex, first_by_scan  # noqa: E402
from evaluators.text import normalize  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--docs", default="400,10000,100000", help="registry sizes, comma-separated")
    ap.add_argument("--probes", type=int, default=40, help="look-ups of each kind")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    import pyarrow.compute  # noqa: F401  (the index sorts with it: imported before memory is traced)

    rng = random.Random(args.seed)
    words = [
        "".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(3, 9))) for _ in range(5000)
    ]

    def text(n: int) -> str:
        return " ".join(rng.choice(words) for _ in range(n))

    print(f"{'documents':>10} {'build s':>8} {'index MB':>9} {'index ms':>9} {'scan ms':>9} {'ratio':>7}")
    for n in (int(x) for x in args.docs.split(",")):
        texts = [normalize(text(80)) for _ in range(n)]
        tracemalloc.start()
        kept = ContentIndex(texts)
        held = tracemalloc.get_traced_memory()[0]
        tracemalloc.stop()
        del kept
        t = time.perf_counter()
        index = ContentIndex(texts)
        build = time.perf_counter() - t
        k = args.probes
        probes = (
            [texts[rng.randrange(n)][40:240] for _ in range(k)]
            + [texts[rng.randrange(n)][10:40] for _ in range(k)]
            + [normalize(text(40)) for _ in range(k)]
            + [normalize("see also " + text(3)) + texts[rng.randrange(n)] for _ in range(k)]
        )
        t = time.perf_counter()
        found = [index.first(p) for p in probes]
        by_index = (time.perf_counter() - t) / len(probes)
        t = time.perf_counter()
        expected = [first_by_scan(texts, p) for p in probes]
        by_scan = (time.perf_counter() - t) / len(probes)
        if found != expected:
            print(f"{n}: the index and the scan disagree", file=sys.stderr)
            return 1
        print(
            f"{n:>10,} {build:>8.2f} {held / 1e6:>9.1f} {by_index * 1e3:>9.3f} {by_scan * 1e3:>9.2f} "
            f"{by_scan / by_index:>6.0f}x"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
