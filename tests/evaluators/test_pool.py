"""Evaluation in worker processes (evaluators/service/pool.py) writes exactly the rows of in-process
evaluation, and a worker that dies loses no batch."""

from __future__ import annotations

import multiprocessing
import os
import pickle
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from bench.evaluate import build_db
from collector.normalize import DEFAULT_SOURCE_KEYS
from collector.store import Store
from evaluators.eval_input import EvalInput
from evaluators.metric import Metric
from evaluators.service.config import EvaluationSettings, evaluator_configs
from evaluators.service.pool import EvalPool
from evaluators.service.registry import discover
from evaluators.service.runner import Runner, StoreRunner
from evaluators.spec import EvaluatorSpec, NoConfig
from ragfault.local import LocalStore
from tests.waiting import wait_until

ROOT = Path(__file__).resolve().parents[2]
TRACES = 90
BATCH = 20


@pytest.fixture(scope="module")
def base_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("pool") / "base.duckdb"
    local, _ = build_db(str(path), TRACES, 60, seed=3)
    local.close()
    return path


def copy_of(base: Path, tmp_path: Path, name: str) -> Path:
    path = tmp_path / f"{name}.duckdb"
    shutil.copy(base, path)
    return path


def crash_in_worker(inp: EvalInput, config: NoConfig) -> list[Metric]:
    """An evaluator that kills the worker process running it (and works in the owning process)."""
    if multiprocessing.parent_process() is not None:
        os._exit(3)
    return [Metric("survived", value=1.0, numerator=1, denominator=1)]


CRASH = EvaluatorSpec(name="crash", version="1", fn=crash_in_worker, description="test: kills a worker")


def raise_always(inp: EvalInput, config: NoConfig) -> list[Metric]:
    raise ValueError("boom")


BOOM = EvaluatorSpec(name="boom", version="1", fn=raise_always, description="test: always raises")


class Counters:
    def __init__(self) -> None:
        self.values: dict[tuple[str, tuple[tuple[str, str], ...]], float] = {}

    def inc(self, name: str, value: float = 1, **labels: str) -> None:
        key = (name, tuple(sorted(labels.items())))
        self.values[key] = self.values.get(key, 0) + value


def evaluate(
    db: Path,
    workers: int,
    extra: dict[str, EvaluatorSpec] | None = None,
    metrics: Counters | None = None,
    pools: list[EvalPool] | None = None,
) -> int:
    """Evaluate every trace of ``db`` (in-process with no workers); the pool used goes to ``pools``."""
    specs = {**discover(), **(extra or {})}
    configs = evaluator_configs(EvaluationSettings(), specs)
    local = LocalStore(str(db))
    try:
        cur = local.store.cursor()
        ids = [r[0] for r in cur.execute("SELECT trace_id FROM traces ORDER BY start_time").fetchall()]
        sr = StoreRunner(cur, local.write, Runner(specs, configs), DEFAULT_SOURCE_KEYS, metrics)
        if workers == 0:
            return sr.evaluate_many(ids, BATCH)
        with EvalPool(workers, sr.runner, DEFAULT_SOURCE_KEYS, max_restarts=1) as pool:
            if pools is not None:
                pools.append(pool)
            return sr.evaluate_many(ids, BATCH, pool)
    finally:
        local.close()


def stored(db: Path) -> dict[str, list[tuple]]:
    store = Store(db, read_only=True)
    try:
        q = store.con.execute
        return {
            "evaluations": q("SELECT * EXCLUDE (evaluated_at) FROM evaluations ORDER BY ALL").fetchall(),
            "eval_log": q("SELECT * EXCLUDE (logged_at) FROM eval_log ORDER BY ALL").fetchall(),
            "traces": q(
                "SELECT trace_id, eval_generation, evaluated_spans FROM traces ORDER BY ALL"
            ).fetchall(),
        }
    finally:
        store.con.close()


def test_pool_writes_the_rows_of_in_process_evaluation(base_db: Path, tmp_path: Path) -> None:
    here, there = copy_of(base_db, tmp_path, "here"), copy_of(base_db, tmp_path, "there")
    assert evaluate(here, 0) == TRACES
    pools: list[EvalPool] = []
    assert evaluate(there, 2, pools=pools) == TRACES
    assert pools[0].restarts == 0 and pools[0].usable  # the workers evaluated every batch
    a, b = stored(here), stored(there)
    assert len(a["evaluations"]) > 40 * TRACES
    assert a == b


def test_a_worker_that_dies_loses_no_batch(base_db: Path, tmp_path: Path) -> None:
    here, there = copy_of(base_db, tmp_path, "here"), copy_of(base_db, tmp_path, "there")
    assert evaluate(here, 0, {"crash": CRASH}) == TRACES
    # every batch kills its worker: each is evaluated in the owning process instead
    pools: list[EvalPool] = []
    assert evaluate(there, 1, {"crash": CRASH}, pools=pools) == TRACES
    # the worker died, was replaced once (max_restarts = 1), died again: the rest ran in-process
    assert pools[0].restarts == 2 and not pools[0].usable
    a, b = stored(here), stored(there)
    assert a == b
    survived = [r for r in b["evaluations"] if r[4] == "crash"]
    assert len(survived) == TRACES and {r[7] for r in survived} == {"survived"}


def test_a_raising_evaluator_gives_error_rows_and_counts_them_in_both_paths(
    base_db: Path, tmp_path: Path
) -> None:
    here, there = copy_of(base_db, tmp_path, "here"), copy_of(base_db, tmp_path, "there")
    counted_here, counted_there = Counters(), Counters()
    evaluate(here, 0, {"boom": BOOM}, counted_here)
    evaluate(there, 2, {"boom": BOOM}, counted_there)
    a, b = stored(here), stored(there)
    assert a == b
    errors = [r for r in a["evaluations"] if r[4] == "boom"]
    assert len(errors) == TRACES and {(r[7], r[11], r[12]) for r in errors} == {
        ("boom", "error", "ValueError: boom")
    }
    for counted in (counted_here, counted_there):
        assert counted.values[("ragfault_evaluator_errors_total", (("evaluator", "boom"),))] == TRACES
        assert counted.values[("ragfault_traces_evaluated_total", (("tier", "cheap"),))] == TRACES


def test_a_spec_that_cannot_be_sent_is_refused_up_front() -> None:
    spec = EvaluatorSpec(name="lambda", version="1", fn=lambda inp, cfg: [])
    runner = Runner({"lambda": spec}, {"lambda": NoConfig()})
    with pytest.raises((pickle.PicklingError, AttributeError), match="pickle"):
        EvalPool(1, runner)


def test_cli_evaluates_with_workers(base_db: Path, tmp_path: Path) -> None:
    here, there = copy_of(base_db, tmp_path, "here"), copy_of(base_db, tmp_path, "there")
    evaluate(here, 0)
    env = dict(os.environ, RAGFAULT_SERVER="http://127.0.0.1:9")  # nothing listens there
    out = subprocess.run(
        [sys.executable, "-m", "ragfault.cli", "evaluate", "--db", str(there), "--workers", "2", "--batch", str(BATCH)],
        capture_output=True, text=True, env=env, cwd=ROOT, timeout=300,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert f"evaluated {TRACES} traces" in out.stdout
    a, b = stored(here), stored(there)
    assert a["evaluations"] == b["evaluations"] and a["traces"] == b["traces"]


CHILD = """
import sys, time
from evaluators.service.config import EvaluationSettings, evaluator_configs
from evaluators.service.pool import EvalPool
from evaluators.service.registry import discover
from evaluators.service.runner import Runner

specs = discover()
pool = EvalPool(2, Runner(specs, evaluator_configs(EvaluationSettings(), specs)))
pool.start()
print(" ".join(str(p) for p in pool.worker_pids()), flush=True)
time.sleep(300)
"""


def _running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as fh:
            return not any(line.startswith("State:") and "Z" in line.split()[1] for line in fh)
    except OSError:
        return False


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs /proc")
def test_workers_exit_when_their_owner_is_killed() -> None:
    child = subprocess.Popen([sys.executable, "-c", CHILD], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    pids: list[int] = []
    try:
        assert child.stdout is not None
        pids = [int(p) for p in child.stdout.readline().split()]
        assert len(pids) == 2 and all(_running(p) for p in pids)
    finally:
        child.kill()
        child.wait()
    try:
        # the workers check on their owner every second
        wait_until(lambda: [p for p in pids if _running(p)], lambda left: not left, what="the workers to exit",
                   timeout=30, every=0.1)  # fmt: skip
    finally:
        for p in pids:  # never leave a worker behind, even when the test fails
            if _running(p):
                os.kill(p, signal.SIGKILL)


def test_workers_run_at_a_lower_cpu_priority_than_their_owner() -> None:
    """In a server, storing spans goes first: evaluation workers are niced."""
    from evaluators.service.pool import WORKER_NICE, _pid

    specs = discover()
    runner = Runner(specs, evaluator_configs(EvaluationSettings(), specs))
    with EvalPool(2, runner, DEFAULT_SOURCE_KEYS) as pool:
        pool.start()
        pids = {pool._executor().submit(_pid).result(60) for _ in range(4)}
        own = os.getpriority(os.PRIO_PROCESS, 0)
        for pid in pids:
            assert os.getpriority(os.PRIO_PROCESS, pid) == min(19, own + WORKER_NICE)


def test_workers_collect_garbage_rarely() -> None:
    """A worker's cyclic collector runs at the decode workers' thresholds, not Python's default
    (every 700 allocations, which walked each batch's unpickled rows several times)."""
    from evaluators.service.pool import _gc_thresholds
    from ragfault_core.gcpolicy import THRESHOLDS

    specs = discover()
    runner = Runner(specs, evaluator_configs(EvaluationSettings(), specs))
    with EvalPool(1, runner, DEFAULT_SOURCE_KEYS) as pool:
        pool.start()
        assert pool._executor().submit(_gc_thresholds).result(60) == THRESHOLDS
