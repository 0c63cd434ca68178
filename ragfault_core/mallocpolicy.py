"""How the server's process gives memory back to the system: it keeps what it frees, for reuse.

A checkpoint allocates and frees large buffers (DuckDB compresses the row groups it writes in memory
it takes from the C library's ``malloc``). glibc's defaults hand large blocks out as fresh mappings
and give the top of a heap back to the kernel once it is 128 KiB free (a threshold it raises only up
to twice the largest mapping freed so far), so the next checkpoint's buffers are new pages again, and
the kernel zeroes every page before handing it over. On the bench's 300,000-trace store at 400
traces a second, 7 of 8 runs with glibc's defaults met a checkpoint of 3-5.7 s (in one, 61 % of the
writer thread's samples were the kernel clearing new pages, ``perf``); with the thresholds below, set
here or through ``GLIBC_TUNABLES``, none of 7 did (the longest 0.8-1.4 s), and with a trim
threshold of 1 GiB one of 3 still did (``bench/README.md``, 2026-12-04).

``keep_freed_memory`` sets them with ``mallopt``: blocks below 32 MiB (the ceiling of glibc's own
dynamic threshold on 64-bit) come from the heap, and a heap is trimmed only once ``TRIM_BYTES`` at
its top are free. Memory that was freed stays resident for the next allocation, so the process's
resident size stays near its peak instead of falling back between checkpoints. The peak is what the
memory bound of docs/limits.md counts, and it was not higher with these settings: the server process
peaked at 2.84-2.90 GB on that store against 2.84-3.14 without, and at 1.29 GB against 1.25 on an
empty one. A ``GLIBC_TUNABLES`` that sets any ``glibc.malloc`` tunable is the operator's choice and
is left as it is; other C libraries (musl, macOS) are left alone.
"""

from __future__ import annotations

import ctypes
import logging
import os

log = logging.getLogger("ragfault.memory")

M_TRIM_THRESHOLD = -1  # glibc's malloc.h
M_MMAP_THRESHOLD = -3
MMAP_BYTES = 32 << 20  # the ceiling of glibc's dynamic mmap threshold on 64-bit
TRIM_BYTES = (1 << 31) - 1  # the largest an int holds (mallopt takes an int)


def keep_freed_memory() -> bool:
    """Set the thresholds above in this process (glibc only); whether they were set."""
    if "glibc.malloc." in os.environ.get("GLIBC_TUNABLES", ""):
        log.info("malloc thresholds left to GLIBC_TUNABLES")
        return False
    libc = ctypes.CDLL(None)  # the symbols already loaded into the process: its C library's among them
    if not hasattr(libc, "gnu_get_libc_version"):  # glibc only
        return False
    mallopt = libc.mallopt
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    done = bool(mallopt(M_MMAP_THRESHOLD, MMAP_BYTES) == 1 and mallopt(M_TRIM_THRESHOLD, TRIM_BYTES) == 1)
    if not done:
        log.warning("mallopt refused the malloc thresholds; checkpoints may take longer")
    return done
