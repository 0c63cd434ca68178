"""Running the ``ragfault`` command as a user would: a child process of this interpreter, the
project's tree on its path, and ``RAGFAULT_SERVER`` pointing where nothing listens unless a test
names a server."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NOWHERE = "http://127.0.0.1:9"  # nothing listens there


def cli(cwd: Path, *argv: str, server: str = NOWHERE) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ragfault.cli", *argv], capture_output=True, text=True, cwd=cwd, timeout=300,
        env={**os.environ, "PYTHONPATH": str(ROOT), "RAGFAULT_SERVER": server},
    )  # fmt: skip
