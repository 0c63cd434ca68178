"""Virtual environments for framework groups whose pins conflict with the project's test extra.

``python tests/frameworks/envs.py GROUP`` prints the Python interpreter of GROUP's environment,
creating it first when needed. A group is a requirements file ``requirements/GROUP.txt`` beside this
script; its environment lives in ``$RAGFAULT_TEST_ENVS/GROUP`` (default: ``ragfault/test-envs``
under the user's cache directory, so that a fresh clone on the same machine reuses it) and is
reused while the file's content is unchanged (a stamp holds its hash), rebuilt when it changes. The group ``main`` is the
test environment itself (the frameworks whose pins agree with the test extra are installed there).

A package whose declared requirements cannot be resolved (an SDK that asks for dozens of
instrumentation packages it imports only when their library is installed) goes in ``GROUP.no-deps``
beside the group's file: those lines are installed with ``--no-deps`` after it, and the group's file
names what they really import, pinned. Both files' content makes the stamp.

The environments see the interpreter's site-packages of nothing else: each has only what its file
names, plus the OpenTelemetry SDK and exporter the apps export with.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import time
import venv
from pathlib import Path

HERE = Path(__file__).resolve().parent
REQUIREMENTS = HERE / "requirements"
VENVS = Path(
    os.environ.get("RAGFAULT_TEST_ENVS")
    or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "ragfault" / "test-envs"
)


def groups() -> list[str]:
    return sorted(p.stem for p in REQUIREMENTS.glob("*.txt"))


def _python(env: Path) -> Path:
    return env / "bin" / "python"


def ensure(group: str) -> tuple[Path, float]:
    """(interpreter, seconds spent creating it: 0.0 when reused) for ``group``.

    Tests running in parallel (``pytest -n``) may ask for the same group at once: one creates it
    while the others wait on its lock file, then find it made."""
    if group == "main":
        return Path(sys.executable), 0.0
    VENVS.mkdir(parents=True, exist_ok=True)
    with open(VENVS / f".{group}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _ensure(group)


def _ensure(group: str) -> tuple[Path, float]:
    req = REQUIREMENTS / f"{group}.txt"
    if not req.is_file():
        raise SystemExit(f"no requirements file for group {group!r} (known: {', '.join(groups())})")
    no_deps = REQUIREMENTS / f"{group}.no-deps"
    content = req.read_bytes() + (b"\0" + no_deps.read_bytes() if no_deps.is_file() else b"")
    digest = hashlib.sha256(content).hexdigest()
    env = VENVS / group
    stamp = env / "ragfault-requirements.sha256"
    if stamp.is_file() and stamp.read_text().strip() == digest and _python(env).is_file():
        return _python(env), 0.0
    started = time.monotonic()
    shutil.rmtree(env, ignore_errors=True)
    # from the base interpreter, so that a venv made from inside the test venv does not chain to it
    builder = venv.EnvBuilder(with_pip=True, clear=True)
    builder.create(env)
    pip = [str(_python(env)), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    steps = [(req, [*pip, "-r", str(req)])]
    if no_deps.is_file():
        steps.append((no_deps, [*pip, "--no-deps", "-r", str(no_deps)]))
    for path, cmd in steps:
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            shutil.rmtree(env, ignore_errors=True)
            raise RuntimeError(f"installing {path.name} failed:\n{done.stdout}\n{done.stderr}")
    stamp.write_text(digest + "\n")
    return _python(env), time.monotonic() - started


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(f"usage: envs.py GROUP   (groups: main, {', '.join(groups())})", file=sys.stderr)
        return 2
    python, seconds = ensure(argv[0])
    print(python)
    if seconds:
        print(f"created {argv[0]} in {seconds:.1f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
