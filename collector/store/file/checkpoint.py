"""When the DuckDB file's writer checkpoints: a checkpoint rewrites (and compresses) everything in
the WAL and costs about as much as the inserts themselves, so the writer runs one when ingest pauses
(``Store.checkpoint_if_idle``) and DuckDB's own threshold (``WAL_HARD_LIMIT``) is only the hard cap
under sustained load. The WAL is replayed after a crash.
"""

from __future__ import annotations

import os

WAL_HARD_LIMIT = "1GB"
# WAL size worth a checkpoint once the writer has nothing to do. Each checkpoint writes what it
# changed into blocks of its own, so the same rows take more disk the more often one runs: the
# bench's traces appended 256 at a time with a checkpoint after each took 7,552 B a trace, 1,024 at
# a time 6,208, 4,096 at a time 5,984 (bench/checkpoint_growth.py --rounds). At 16 MiB (about 240
# of those traces) an application sending a request every few seconds met one checkpoint every
# other request; 64 MiB is a quarter of BUSY_CHECKPOINT_BYTES, so neither the WAL's memory nor its
# replay after a crash grows past what steady ingest already allows (bench/README.md, 2026-12-04)
IDLE_CHECKPOINT_BYTES = 64 << 20
# ... and while it runs only jobs (an evaluation backlog, no ingest): every checkpoint rewrites the
# row groups being filled, so checkpointing every 16 MB there cost a 10,000-trace evaluation drain
# about a tenth of its throughput (and a third of the server process's CPU a trace)
JOBS_CHECKPOINT_BYTES = 256 << 20
# ... and under steady ingest, which never pauses for an idle checkpoint: DuckDB holds the WAL's data
# in memory until a checkpoint (the server process reached 2.1 GB with 790 MB in the WAL at 400
# traces a second), and its own checkpoint at WAL_HARD_LIMIT runs inside a commit. Smaller costs CPU
# for the same reason as above: at 400 a second, 64 MB took a third more CPU a trace and held
# acknowledgements up to 6 s; 256 MB peaked at 1.3 GB, its CPU within the runs' spread
BUSY_CHECKPOINT_BYTES = 256 << 20


def wal_bytes(path: str) -> int:
    """The size of the file's write-ahead log (0 when there is none)."""
    try:
        return os.path.getsize(path + ".wal")
    except OSError:
        return 0
