"""How often the cyclic garbage collector runs in the server's processes.

Storing, settling and evaluating a trace allocate hundreds of thousands of short-lived, acyclic
objects a request (attribute dicts, row tuples, strings, views, verdicts). With Python's default
thresholds (a young collection every 700 net allocations) the collector walks them several times
before reference counting frees them, and now and then walks the whole heap with them.
``collect_rarely`` moves what start-up built (modules, settings, the evaluator registry) out of the
collector's reach (``gc.freeze``) and raises the thresholds: the collector still takes the rare
cycles, a hundred times less often. The decode workers, the evaluation workers and the server's own
process all run with it.
"""

from __future__ import annotations

import gc

THRESHOLDS = (100_000, 50, 100)


def collect_rarely() -> None:
    """Freeze the objects made so far and collect with ``THRESHOLDS`` from now on."""
    gc.freeze()
    gc.set_threshold(*THRESHOLDS)
