"""The import contracts of ``pyproject.toml`` (``[tool.importlinter]``) hold: the allowed directions
between the packages, written down so that the layering cannot drift back. ``lint-imports`` checks
them; this test runs it so the suite does, and shows that a contract can fail."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

from tests.layout.scan import ROOT

PYPROJECT = ROOT / "pyproject.toml"


def _lint(config: Path) -> subprocess.CompletedProcess[str]:
    """``lint-imports`` on ``config`` with this interpreter, from the project root (where the root
    packages import from), without a cache in the tree."""
    code = "import sys; from importlinter.cli import lint_imports_command; sys.exit(lint_imports_command())"
    return subprocess.run(
        [sys.executable, "-c", code, "--no-cache", "--no-logo", str(config)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_the_import_contracts_are_kept() -> None:
    done = _lint(PYPROJECT)
    assert done.returncode == 0, done.stdout + done.stderr
    contracts = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["tool"]["importlinter"]["contracts"]
    kept = done.stdout.count(" KEPT")
    assert kept == len(contracts) >= 4, done.stdout


def test_a_broken_contract_fails_the_check(tmp_path: Path) -> None:
    """The project's root packages under a layers contract the tree breaks (the collector put above
    ragfault, which imports it): the same check reports the offending imports and fails."""
    settings = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["tool"]["importlinter"]
    config = tmp_path / "contracts.toml"
    config.write_text(
        "[tool.importlinter]\n"
        f"root_packages = {json.dumps(settings['root_packages'])}\n"
        "[[tool.importlinter.contracts]]\n"
        'id = "upside-down"\nname = "collector above ragfault"\ntype = "layers"\n'
        'layers = ["collector", "ragfault"]\n',
        encoding="utf-8",
    )
    done = _lint(config)
    assert done.returncode != 0, done.stdout + done.stderr
    assert "collector above ragfault BROKEN" in done.stdout, done.stdout
    assert "ragfault is not allowed to import collector" in done.stdout, done.stdout
