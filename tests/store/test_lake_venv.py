"""Runs the lake tests (``tests/store/lake/``) and the store contract (``tests/store/contract/``, both
backends) in the environment with the pinned ``lake`` set when this one has another DuckDB: the
extension packages exist for DuckDB 1.5.5 only."""

from __future__ import annotations

import re
import sys

import pytest

from tests.needs import WITHOUT
from tests.store import lake_run


def test_the_lake_tests_pass_with_the_pinned_lake_set() -> None:
    if not lake_run.needed():
        pytest.skip("this environment has the lake set: tests/store/lake/ and contract/ run here directly")
    done = lake_run.RUN.result()  # started in the background once the suite was collected
    tail = (done.stdout + done.stderr)[-4000:]
    sys.stdout.write(tail)
    assert done.returncode == 0, tail
    assert " passed" in done.stdout.splitlines()[-1], tail
    # the only skips: contract tests of operations the lake does not implement yet, each named, and
    # tests needing a program this machine is declared to go without (tests/needs.py)
    skips = [line for line in done.stdout.splitlines() if line.startswith("SKIPPED")]
    assert all(
        re.search(r"tests/store/contract/.*not on ducklake yet: \S", line) or f"({WITHOUT}=" in line
        for line in skips
    ), tail
