"""The virtual environment with the pinned ``lake`` set (DuckDB 1.5.5 and its DuckDB-signed
ducklake and postgres extensions), for the lake tests when the environment running the suite has a
DuckDB the extension packages do not exist for.

Only the ``lake`` extra's packages are installed into it (``--no-deps``, a few seconds); everything
else — the project, pytest, the OpenTelemetry SDK — comes from the environment that creates it, whose
site-packages a ``.pth`` file appends after the lake's own, so ``import duckdb`` finds 1.5.5 first.
Kept under ``.lake-venv/`` (git-ignored) and rebuilt when the ``lake`` extra, the Python version or the
creating environment changes. ``python -m tests.store.lake_venv`` creates it and prints its interpreter.
"""

from __future__ import annotations

import fcntl
import hashlib
import site
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
VENV = ROOT / ".lake-venv"


def lake_extra() -> list[str]:
    """The requirements of pyproject.toml's ``lake`` extra."""
    with open(ROOT / "pyproject.toml", "rb") as fh:
        return list(tomllib.load(fh)["project"]["optional-dependencies"]["lake"])


def stamp() -> str:
    key = f"{lake_extra()}\n{sys.version_info[:3]}\n{sys.prefix}\n{site.getsitepackages()}"
    return hashlib.sha256(key.encode()).hexdigest()[:16]


def python() -> Path:
    return VENV / "bin" / "python"


def ensure() -> Path:
    """Create (or reuse) the environment; returns its interpreter. Callers in parallel test
    processes take turns on a lock file beside it."""
    VENV.parent.mkdir(parents=True, exist_ok=True)
    with open(VENV.parent / f"{VENV.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _ensure()


def _ensure() -> Path:
    marker = VENV / ".ragfault-stamp"
    if python().exists() and marker.exists() and marker.read_text().strip() == stamp():
        return python()
    base = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base, "-m", "venv", "--clear", "--without-pip", str(VENV)], check=True, timeout=300)
    pip = [
        sys.executable,
        "-m",
        "pip",
        "--python",
        str(python()),
        "install",
        "-q",
        "--disable-pip-version-check",
    ]
    subprocess.run([*pip, "--no-deps", *lake_extra()], check=True, timeout=900, cwd=ROOT)
    own = subprocess.run(
        [str(python()), "-c", "import site; print(site.getsitepackages()[0])"],
        check=True, capture_output=True, text=True, timeout=60,
    ).stdout.strip()  # fmt: skip
    Path(own, "_ragfault_parent_env.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    marker.write_text(stamp() + "\n")
    return python()


if __name__ == "__main__":
    print(ensure())
