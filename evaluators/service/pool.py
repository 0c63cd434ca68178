"""Cheap-tier evaluation in worker processes, for long offline runs (``ragfault evaluate``).

The evaluators are pure Python and, under one GIL, use one core. ``EvalPool`` runs them in worker
processes: the process that owns the database fetches each batch's rows column-wise
(``evaluators.service.runner.fetch_tables``), hands the Arrow tables to a worker and writes the Arrow
tables of verdict rows it gets back (``StoreRunner.evaluate_many``). A worker builds the views,
joins gold cases, runs the evaluators and lays out the rows exactly as the in-process path does
(same functions), so the rows are identical.

What a worker needs besides the rows travels as plain data: the evaluator specs and their
configs at start (pickled: specs must be module-level functions), and gold cases and the
knowledge base as a file written once per version of those tables (workers load it when the
path changes).

A batch is never lost: when its worker raises or dies (killed, out of memory), the batch is
evaluated in the owning process from the rows already fetched, and the next batch gets a fresh
pool (after ``max_restarts`` restarts the run carries on in-process).

Workers run niced (``WORKER_NICE``), so in a server they take the CPU that ingest leaves.

Workers start with ``forkserver``, never ``fork`` (a server process runs threads, which a fork
would copy in an undefined state), and exit by themselves when the process that started them is
gone. The pool is ``ragfault_core.procpool.WorkerPool``, not ``ProcessPoolExecutor``, whose exit can
hang after a worker died on Python 3.11 before 3.11.5 (see that module).
"""

from __future__ import annotations

import gc
import logging
import multiprocessing
import os
import pickle
import shutil
import tempfile
import threading
import time
from concurrent.futures import Future
from concurrent.futures.process import BrokenProcessPool
from datetime import datetime
from types import TracebackType
from typing import Any

from evaluators.service.runner import EvalTables, References, Runner, TraceTables, evaluate_tables
from ragfault_core.gcpolicy import collect_rarely
from ragfault_core.processes import default_workers as default_workers  # the same policy for a long run
from ragfault_core.processes import process_start_time
from ragfault_core.procpool import WorkerPool

log = logging.getLogger("ragfault.evaluate")


# --- in a worker -------------------------------------------------------------------------------

_state: dict[str, Any] = {}

# Workers run at a lower CPU priority: in a server, receiving and storing spans goes first and the
# evaluation backlog (kept in the database, its lag on /metrics) waits for spare CPU. With nothing
# else running (``ragfault evaluate`` on a file) it makes no difference.
WORKER_NICE = 10


def _watch_owner(pid: int, born: str | None) -> None:
    # the owner is not this worker's parent (the forkserver is), so its death sends no signal here;
    # ``born`` comes from the owner itself: a worker that starts after the owner died exits too
    while born is not None and process_start_time(pid) == born:
        time.sleep(1.0)
    os._exit(0)


def _init_worker(owner_pid: int, owner_born: str | None, runner_state: bytes) -> None:
    threading.Thread(
        target=_watch_owner, args=(owner_pid, owner_born), name="owner-watch", daemon=True
    ).start()
    try:
        os.nice(WORKER_NICE)
    except OSError:
        pass
    specs, configs, tier, source_keys = pickle.loads(runner_state)
    _state["runner"] = Runner(specs, configs, tier)
    _state["source_keys"] = source_keys
    # a batch is evaluated with the collector paused (``gc_paused``); unpickling its tables and
    # pickling its verdicts are not, and the registry a worker loads outlives every batch
    collect_rarely()


def _references(path: str) -> References:
    if _state.get("refs_path") != path:
        loaded = References()
        with open(path, "rb") as fh:
            loaded.set_state(pickle.load(fh))
        _state["refs"], _state["refs_path"] = loaded, path
    refs: References = _state["refs"]
    return refs


def _work(refs_path: str, tables: TraceTables, now: datetime) -> EvalTables:
    return evaluate_tables(_state["runner"], _references(refs_path), tables, now, _state["source_keys"])


def _pid() -> int:
    return os.getpid()


def _gc_thresholds() -> tuple[int, int, int]:
    return gc.get_threshold()


# --- in the owning process ----------------------------------------------------------------------


class EvalPool:
    """Worker processes evaluating batches of fetched rows; recreated when a worker dies."""

    def __init__(
        self, workers: int, runner: Runner, source_keys: tuple[str, ...] = (), max_restarts: int = 3
    ) -> None:
        if workers < 1:
            raise ValueError("an evaluation pool needs at least one worker")
        self.workers = workers
        self.max_restarts = max_restarts
        self.restarts = 0
        self.generation = 0  # which executor: a future of an older one failing says nothing of the current
        # fails here, not in a worker, when a spec cannot be sent (e.g. a lambda)
        configs = {n: runner.configs[n] for n in runner.specs}
        self._runner_state = pickle.dumps((runner.specs, configs, runner.tier, tuple(source_keys)))
        self._ctx = multiprocessing.get_context("forkserver")
        self._pool: WorkerPool | None = None
        self._dir = tempfile.mkdtemp(prefix="ragfault-eval-")
        self._refs_stamp: Any = None
        self._refs_path: str | None = None
        self._refs_count = 0

    # lifecycle

    def _executor(self) -> WorkerPool:
        if self._pool is None:
            self._pool = WorkerPool(
                self.workers,
                self._ctx,
                _init_worker,
                (os.getpid(), process_start_time(os.getpid()), self._runner_state),
                name="ragfault-eval",
            )
        return self._pool

    def start(self) -> None:
        """Start the workers now (otherwise the first batch does)."""
        pool = self._executor()
        for f in [pool.submit(_pid) for _ in range(self.workers)]:
            f.result(120)

    @property
    def usable(self) -> bool:
        """False once the pool broke more than ``max_restarts`` times (the run goes on in-process)."""
        return self.restarts <= self.max_restarts

    def worker_pids(self) -> list[int]:
        """The worker processes' pids (none before the first batch or ``start``)."""
        return sorted(self._pool._processes) if self._pool is not None else []

    def worker_processes(self) -> list[Any]:
        return list(self._pool._processes.values()) if self._pool is not None else []

    def broken(self, generation: int | None = None) -> None:
        """A worker of this executor generation (default: the current one) died: drop the executor;
        the next submit starts a new one. A stale generation is ignored."""
        if generation is not None and generation != self.generation:
            return
        pool, self._pool = self._pool, None
        if pool is not None:
            self.generation += 1
            self.restarts += 1
            log.warning(
                "an evaluation worker died; %s",
                "starting a new pool" if self.usable else "evaluating in-process",
            )
            pool.shutdown(wait=False, cancel_futures=True)

    def close(self) -> None:
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
        shutil.rmtree(self._dir, ignore_errors=True)

    def __enter__(self) -> EvalPool:
        return self

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    # work

    def refs_file(self, refs: References) -> str:
        """The file holding this version of the gold cases and the registry (written once a version)."""
        if self._refs_path is None or refs.stamp != self._refs_stamp:
            self._refs_count += 1
            path = os.path.join(self._dir, f"refs-{self._refs_count}.pickle")
            with open(path, "wb") as fh:
                pickle.dump(refs.get_state(), fh, protocol=pickle.HIGHEST_PROTOCOL)
            self._refs_path, self._refs_stamp = path, refs.stamp
        return self._refs_path

    def submit(self, refs: References, tables: TraceTables, now: datetime) -> Future[EvalTables]:
        """Evaluate fetched rows in a worker. Raises BrokenProcessPool when no worker can take it."""
        path = self.refs_file(refs)
        pool = self._executor()
        try:
            return pool.submit(_work, path, tables, now)
        except (BrokenProcessPool, RuntimeError) as exc:
            self.broken()
            raise BrokenProcessPool(str(exc)) from exc
