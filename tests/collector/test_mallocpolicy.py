"""The server's malloc thresholds (``ragfault_core.mallocpolicy``): set in a fresh process on glibc, left
to the operator when ``GLIBC_TUNABLES`` sets a malloc tunable."""

from __future__ import annotations

import os
import platform
import subprocess
import sys

import pytest

PROBE = (
    "import logging, sys; logging.basicConfig(level=logging.INFO); "
    "from ragfault_core.mallocpolicy import keep_freed_memory; print(keep_freed_memory())"
)


def _run(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, timeout=60, check=True
    )


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="glibc's mallopt")
def test_thresholds_are_accepted_by_glibc() -> None:
    env = {k: v for k, v in os.environ.items() if k != "GLIBC_TUNABLES"}
    out = _run(env)
    assert out.stdout.strip() == "True", out.stderr  # mallopt returned 1 for both values


def test_an_operators_malloc_tunables_are_left_as_they_are() -> None:
    out = _run({**os.environ, "GLIBC_TUNABLES": "glibc.malloc.trim_threshold=1048576"})
    assert out.stdout.strip() == "False"
    assert "left to GLIBC_TUNABLES" in out.stderr
