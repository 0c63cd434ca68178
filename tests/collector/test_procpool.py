"""The worker pools survive a worker that dies while a task is being written to it, and the
interpreter still exits (CPython gh-94777 hangs ``ProcessPoolExecutor`` there on 3.11 < 3.11.5)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

import pytest

from ragfault_core.procpool import WorkerPool

ROOT = Path(__file__).resolve().parents[2]

# The worker is stopped, a task far larger than a pipe's buffer is handed over (the writer blocks),
# then the worker is killed. The task fails as broken, and the process must exit by itself.
SCRIPT = """
import os, signal, sys, time
from concurrent.futures.process import BrokenProcessPool

def pool_and_executor(kind):
    if kind == "decode":
        from collector.ingest.decode_pool import DecodePool
        pool = DecodePool(1)
    else:
        from evaluators.service.config import EvaluationSettings, evaluator_configs
        from evaluators.service.pool import EvalPool
        from evaluators.service.registry import discover
        from evaluators.service.runner import Runner
        specs = discover()
        pool = EvalPool(1, Runner(specs, evaluator_configs(EvaluationSettings(), specs)))
    pool.start()
    return pool, pool._executor()

if __name__ == "__main__":
    pool, ex = pool_and_executor(sys.argv[1])
    (pid,) = sorted(ex._processes)  # the executor's workers
    os.kill(pid, signal.SIGSTOP)
    fut = ex.submit(len, b"x" * (64 << 20))
    deadline = time.monotonic() + 60
    while not fut.running() and time.monotonic() < deadline:  # handed to the writer
        time.sleep(0.01)
    os.kill(pid, signal.SIGKILL)
    try:
        fut.result(60)
    except BrokenProcessPool:
        print("broken", flush=True)
"""


@pytest.mark.parametrize("kind", ["decode", "eval"])
def test_a_worker_killed_mid_write_breaks_the_pool_and_the_process_exits(kind: str, tmp_path: Path) -> None:
    script = tmp_path / "owner.py"
    script.write_text(textwrap.dedent(SCRIPT))
    proc = subprocess.Popen(
        [sys.executable, str(script), kind], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
    )  # fmt: skip
    try:
        out, err = proc.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        pytest.fail("the process did not exit after its pool's worker died")
    assert proc.returncode == 0, err
    assert out.strip() == "broken"


def _double(x: int) -> int:
    return 2 * x


def _fail(x: int) -> int:
    raise ValueError(f"bad {x}")


def _die(x: int) -> int:
    os._exit(3)


def test_results_errors_and_a_dead_worker() -> None:
    import multiprocessing

    pool = WorkerPool(2, multiprocessing.get_context("forkserver"))
    try:
        assert [f.result(60) for f in [pool.submit(_double, i) for i in range(6)]] == [0, 2, 4, 6, 8, 10]
        with pytest.raises(ValueError, match="bad 7"):
            pool.submit(_fail, 7).result(60)
        with pytest.raises(BrokenProcessPool):
            pool.submit(_die, 0).result(60)
        with pytest.raises(BrokenProcessPool):
            pool.submit(_double, 1)
        for proc in pool._processes.values():
            proc.join(30)
            assert not proc.is_alive()
    finally:
        pool.shutdown()
