"""The lake set (``tests/store/lake/`` and ``tests/store/contract/``) run in the environment with the
pinned ``lake`` set, started in the background once the suite is collected: it takes about four
minutes alone, mostly waiting on PostgreSQL and its collectors, so it shares the machine with the
rest of the suite instead of taking its turn at the end. ``test_lake_venv`` waits for its result.

When the suite runs in parallel (``pytest -n``), the controlling process starts the set as soon as a
worker has collected the test, and writes its result to a file named after the run
(``PYTEST_XDIST_TESTRUNUID``); it holds a lock on that file's lock file until the result is written,
so the worker that reaches the test waits on the lock, then reads the result."""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import tempfile
import threading
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO

from collector.store.lake.attach import EXTENSIONS, package_file
from tests.store import lake_venv

NODE = "tests/store/test_lake_venv.py::test_the_lake_tests_pass_with_the_pinned_lake_set"
TIMEOUT = 1500  # seconds, for the whole set (it passes in four minutes on a quiet machine)


@dataclass
class Done:
    returncode: int
    stdout: str
    stderr: str


def shared_result(run_uid: str) -> Path:
    """Where the controlling process of parallel run ``run_uid`` writes the set's result."""
    return Path(tempfile.gettempdir()) / f"ragfault-lake-set-{run_uid}.json"


def _lock_path(result: Path) -> Path:
    return result.with_suffix(".lock")


class LakeRun:
    def __init__(self) -> None:
        self._thread: threading.Thread | None = None
        self._proc: subprocess.Popen[str] | None = None
        self._done: Done | None = None
        self._lock = threading.Lock()
        self._share: tuple[Path, IO[str]] | None = None  # the result file and its held lock

    def start(self, share: Path | None = None) -> None:
        """Start the set in the background (once); with ``share``, write its result there for
        another process, holding that file's lock until then."""
        with self._lock:
            if self._thread is None:
                if share is not None:
                    share.unlink(missing_ok=True)
                    held = open(_lock_path(share), "w")  # noqa: SIM115 (closed once the result is written)
                    fcntl.flock(held, fcntl.LOCK_EX)
                    self._share = (share, held)
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
        finally:
            self._publish()

    def _publish(self) -> None:
        if self._share is None:
            return
        path, held = self._share
        done = self._done or Done(-1, "", "the lake set was stopped before it finished")
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(asdict(done)))
        tmp.replace(path)
        held.close()  # releases the lock: the waiting worker reads the file

    def result(self) -> Done:
        run_uid = os.environ.get("PYTEST_XDIST_TESTRUNUID")
        if os.environ.get("PYTEST_XDIST_WORKER") and run_uid:
            shared = _wait_for(shared_result(run_uid))
            if shared is not None:
                return shared
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
        if self._thread is not None:
            self._thread.join(60)
        if self._share is not None:
            path, _ = self._share
            path.unlink(missing_ok=True)
            _lock_path(path).unlink(missing_ok=True)


def _wait_for(result: Path) -> Done | None:
    """The result the controlling process writes to ``result``, once it has (None when it did not
    start the set: this process runs it itself)."""
    lock = _lock_path(result)
    if not lock.exists():
        return None
    with open(lock) as fh:
        fcntl.flock(fh, fcntl.LOCK_SH)  # held by the controlling process until the result is written
    if not result.exists():
        return None
    return Done(**json.loads(result.read_text()))


RUN = LakeRun()


def needed() -> bool:
    """True when this environment lacks the lake set (another DuckDB), so the set runs in the pinned one."""
    return not all(package_file(package, name) for package, name in EXTENSIONS)
