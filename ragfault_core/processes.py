"""How many worker processes a pool runs, and how a worker tells that the process it works for is
still the one that started it: the policy the decode workers (``collector.ingest.decode_pool``) and
the evaluation workers (``evaluators.service.pool``) share."""

from __future__ import annotations

import os


def usable_cores() -> int:
    """The cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def default_workers() -> int:
    """Worker processes when none are configured (decode workers, evaluation workers): one a core,
    at most 4; none on one core."""
    n = usable_cores()
    return 0 if n <= 1 else min(4, n)


def process_start_time(pid: int) -> str | None:
    """The kernel's start time of ``pid`` (tells a reused pid apart), or None when it is gone.

    Worker processes watch their owner with it (decode workers here, evaluation workers too)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rsplit(b")", 1)[1].split()[19].decode()
    except (OSError, IndexError):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return None
        except OSError:
            pass
        return ""
