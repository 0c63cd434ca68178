"""The site's framework table (docs/instrument.md) names only frameworks with a test module here, each
of which runs."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_each_framework_row_names_a_test_module_that_exists() -> None:
    text = (ROOT / "docs" / "instrument.md").read_text(encoding="utf-8")
    section = text.split("## Frameworks tested end to end", 1)[1].split("\n## ", 1)[0]
    table = [ln for ln in section.splitlines() if ln.startswith("| ")]
    assert table and table[0].startswith("| framework"), section
    rows = table[2:]
    assert rows, section
    for row in rows:
        cells = [c.strip() for c in row.strip("|").split("|")]
        modules = re.findall(r"`(test_\w+\.py)`", cells[-1])
        assert modules, row
        for module in modules:
            source = (ROOT / "tests" / "frameworks" / module).read_text(encoding="utf-8")
            assert "def test_" in source and ("run_app(" in source or "run_node(" in source), module
        # the instrumentor named in the row is installed by the tests (the test extra, a group's
        # requirements file or the Node packages), or is a class the module's apps use
        named = re.search(r"`([^`]+)`", cells[1])
        assert named, row
        token = named.group(1)
        installed = (ROOT / "pyproject.toml").read_text(encoding="utf-8") + "".join(
            p.read_text(encoding="utf-8")
            for p in sorted((ROOT / "tests" / "frameworks" / "requirements").glob("*"))
            if p.suffix in (".txt", ".no-deps")
        )
        installed += (ROOT / "tests" / "frameworks" / "node" / "package.json").read_text(encoding="utf-8")
        apps = "".join(
            p.read_text(encoding="utf-8") for p in (ROOT / "tests" / "frameworks" / "apps").glob("*.py")
        )
        assert f'"{token}' in installed or f"\n{token}" in installed or token.split(".")[-1] in apps, row
