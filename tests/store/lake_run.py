"""The lake set (``tests/store/lake/`` and ``tests/store/contract/``) run in the environment with the
pinned ``lake`` set, started in the background once the suite is collected: it takes about four
minutes alone, mostly waiting on PostgreSQL and its collectors, so it shares the machine with the
rest of the suite instead of taking its turn at the end. ``test_lake_venv`` waits for its result."""

from __future__ import annotations

import os
import subprocess
import threading
from dataclasses import dataclass

from collector.store.lake import EXTENSIONS, _package_file
from tests.store import lake_venv

NODE = "tests/store/test_lake_venv.py::test_the_lake_tests_pass_with_the_pinned_lake_set"
TIMEOUT = 1500  # seconds, for the whole set (it passes in four minutes on a quiet machine)


@dataclass
class Done:
    returncode: int
    stdout: str
    stderr: str


class LakeRun:
    def __init__(self) -> None:
        self._thread: threading.Thread | None = None
        self._proc: subprocess.Popen[str] | None = None
        self._done: Done | None = None
        self._lock = threading.Lock()

    def start(self) -> None:
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="lake-set", daemon=True)
                self._thread.start()

    def _run(self) -> None:
        try:
            python = lake_venv.ensure()
            env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
            args = [
                "-m",
                "pytest",
                "-q",
                "-p",
                "no:cacheprovider",
                "-x",
                "-rs",
                "tests/store/lake",
                "tests/store/contract",
            ]
            with self._lock:
                self._proc = subprocess.Popen(
                    [str(python), *args], cwd=lake_venv.ROOT, env=env, text=True,
                    stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                )  # fmt: skip
            try:
                out, err = self._proc.communicate(timeout=TIMEOUT)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                out, err = self._proc.communicate()
                err += f"\nthe lake set did not finish in {TIMEOUT} s"
            self._done = Done(self._proc.returncode, out, err)
        except Exception as exc:  # the environment could not be made: the test reports it
            self._done = Done(-1, "", f"{type(exc).__name__}: {exc}")

    def result(self) -> Done:
        self.start()
        assert self._thread is not None
        self._thread.join()
        assert self._done is not None
        return self._done

    def stop(self) -> None:
        """Kill a run still going (the suite was interrupted, or the test was not reached)."""
        with self._lock:
            if self._proc is not None and self._proc.poll() is None:
                self._proc.kill()


RUN = LakeRun()


def needed() -> bool:
    """True when this environment lacks the lake set (another DuckDB), so the set runs in the pinned one."""
    return not all(_package_file(package, name) for package, name in EXTENSIONS)
