"""The ``ragfault`` command builds its parser without the engine: a refusal or ``--help`` does not
pay for importing DuckDB, Arrow, NumPy or pydantic (about a second of CPU on a small machine)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

HEAVY = ("duckdb", "pyarrow", "numpy", "pydantic", "fastapi", "grpc", "httpx", "google.protobuf")

PROBE = """
import json, sys
from ragfault.cli import build_parser
build_parser()
print(json.dumps(sorted(m for m in {heavy!r} if m in sys.modules)))
"""


def test_building_the_parser_imports_none_of_the_engine() -> None:
    out = subprocess.run(
        [sys.executable, "-c", PROBE.format(heavy=HEAVY)], capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == []


def test_a_refused_database_is_named_before_the_engine_is_imported(tmp_path: Path) -> None:
    probe = (
        "import json, sys\n"
        "from ragfault.cli import main\n"
        "code = main(['evaluate', '--db', 'rael.duckdb', '--server', 'http://127.0.0.1:9'])\n"
        f"print(json.dumps([code, sorted(m for m in {HEAVY!r} if m in sys.modules)]))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, cwd=tmp_path
    )
    code, loaded = json.loads(out.stdout.splitlines()[-1])
    assert code == 2 and "no database file rael.duckdb" in out.stderr
    assert loaded == []
