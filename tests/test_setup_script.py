"""``./scripts/test.sh``, the test command, on a machine that lacks what the tests need from the system.

Each run gets a PATH of its own: a directory linking every program of this machine's PATH but the
ones a test takes away (haproxy, PostgreSQL's initdb and pg_ctl, chromium, fontconfig's fc-list, and
apt-get and sudo, so that nothing can be installed), with the script's extra search directories
emptied. The script must then stop before making its environment, naming each missing program and
the command that installs it; nothing here installs anything, so the tests take a second.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

import pytest

from tests.needs import WITHOUT, missing

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "test.sh"
BASH = shutil.which("bash") or "/bin/bash"
TAKEN = {"haproxy", "initdb", "pg_ctl", "chromium", "chromium-browser", "fc-list", "apt-get", "sudo"}
SUDO = "" if os.geteuid() == 0 else "sudo "


def own_path(root: Path, taken: Iterable[str] = TAKEN) -> Path:
    """A directory of links to every program on PATH (and in /usr/sbin and /sbin) but ``taken``; the
    first of a name on PATH wins, as it would in a shell."""
    bin_dir = root / "bin"
    bin_dir.mkdir(parents=True)
    taken = set(taken)
    for directory in [*os.environ.get("PATH", "").split(os.pathsep), "/usr/sbin", "/sbin"]:
        if not directory or not os.path.isdir(directory):
            continue
        for entry in os.scandir(directory):
            link = bin_dir / entry.name
            if entry.name in taken or os.path.lexists(link) or not os.access(entry.path, os.X_OK):
                continue
            if entry.is_file():
                link.symlink_to(entry.path)
    return bin_dir


def stub(bin_dir: Path, name: str, body: str) -> None:
    """A program ``name`` in ``bin_dir`` that runs the shell lines ``body``."""
    path = bin_dir / name
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)


def run(
    tmp_path: Path, bin_dir: Path, *args: str, **env: str
) -> tuple[subprocess.CompletedProcess[str], Path]:
    """The script with ``bin_dir`` as PATH, an environment directory under ``tmp_path`` and the
    interpreter of this test as the one that would create it; (the run, that directory)."""
    venv = tmp_path / "venv"
    base = {k: v for k, v in os.environ.items() if not k.startswith(("RAGFAULT_", "VIRTUAL_ENV"))}
    base.update(PATH=str(bin_dir), RAGFAULT_SETUP_SEARCH="", RAGFAULT_VENV=str(venv))
    base.update({"RAGFAULT_PYTHON": sys.executable, **env})
    done = subprocess.run(
        [BASH, str(SCRIPT), *args], cwd=tmp_path, env=base, capture_output=True, text=True, timeout=60
    )
    return done, venv


NAMED = [
    "haproxy (the load-balancing test",
    "PostgreSQL's initdb and pg_ctl",
    "chromium (the browser tests",
    "a font with CJK glyphs",
]


def test_check_names_each_missing_program_and_the_command_that_installs_it(tmp_path: Path) -> None:
    done, venv = run(tmp_path, own_path(tmp_path), "--check")
    assert done.returncode == 1, done.stderr
    for what in NAMED:
        assert what in done.stderr, done.stderr
    packages = "haproxy postgresql chromium fontconfig fonts-droid-fallback"
    assert f"{SUDO}apt-get update && {SUDO}apt-get install -y {packages}\n" in done.stderr
    assert f"{WITHOUT}=haproxy,postgresql,chromium ./scripts/test.sh" in done.stderr
    assert not venv.exists()


def test_the_test_command_fails_loudly_before_anything_when_it_cannot_install(tmp_path: Path) -> None:
    done, venv = run(tmp_path, own_path(tmp_path), "tests/test_docs.py")
    assert done.returncode == 1, done.stderr
    for what in NAMED:
        assert what in done.stderr, done.stderr
    assert "apt-get (Debian, Ubuntu), which is not here" in done.stderr
    assert "apt-get install -y haproxy postgresql chromium" in done.stderr
    # stopped before the environment and the suite
    assert not venv.exists() and "passed" not in done.stdout + done.stderr


def test_what_the_machine_goes_without_is_neither_asked_for_nor_installed(tmp_path: Path) -> None:
    bin_dir = own_path(tmp_path)
    done, _ = run(tmp_path, bin_dir, "--check", RAGFAULT_TESTS_WITHOUT="chromium")
    assert done.returncode == 1
    assert "haproxy (" in done.stderr and "PostgreSQL's" in done.stderr
    assert "chromium (" not in done.stderr and "CJK" not in done.stderr
    assert "apt-get install -y haproxy postgresql\n" in done.stderr
    done, venv = run(tmp_path, bin_dir, "--check", RAGFAULT_TESTS_WITHOUT="haproxy, postgresql,chromium")
    assert done.returncode == 0, done.stderr
    for name in ("haproxy", "postgresql", "chromium"):
        assert f"going without {name}" in done.stderr
    assert not venv.exists()


def test_a_misspelt_opt_out_is_refused(tmp_path: Path) -> None:
    done, _ = run(tmp_path, own_path(tmp_path), "--check", RAGFAULT_TESTS_WITHOUT="chrome")
    assert done.returncode == 1
    assert "RAGFAULT_TESTS_WITHOUT names 'chrome'" in done.stderr


def test_programs_are_found_on_path_or_in_the_search_directories(tmp_path: Path) -> None:
    """haproxy on PATH, PostgreSQL's programs only in a versioned directory as Debian keeps them, a
    chromium that answers --version and a CJK font: nothing is missing. A chromium that does not
    run (Ubuntu's apt package is a stub of the snap) counts as missing."""
    bin_dir = own_path(tmp_path)
    pg = tmp_path / "postgresql" / "17" / "bin"
    pg.mkdir(parents=True)
    for name in ("initdb", "pg_ctl"):
        stub(pg, name, "exit 0")
    stub(bin_dir, "haproxy", "exit 0")
    stub(bin_dir, "fc-list", 'echo "/usr/share/fonts/DroidSansFallbackFull.ttf: Droid Sans Fallback"')
    stub(bin_dir, "chromium", 'echo "Chromium 140"')
    search = str(tmp_path / "postgresql" / "*" / "bin")
    done, _ = run(tmp_path, bin_dir, "--check", RAGFAULT_SETUP_SEARCH=search)
    assert done.returncode == 0, done.stderr
    assert "has what the tests need" in done.stderr
    stub(bin_dir, "chromium", "echo 'requires the chromium snap to be installed' >&2; exit 1")
    done, _ = run(tmp_path, bin_dir, "--check", RAGFAULT_SETUP_SEARCH=search)
    assert done.returncode == 1
    assert "chromium (the browser tests" in done.stderr and "haproxy (" not in done.stderr
    done, _ = run(tmp_path, bin_dir, "--check", RAGFAULT_SETUP_SEARCH=search, RAGFAULT_CHROMIUM="/nowhere")
    assert done.returncode == 1
    assert "RAGFAULT_CHROMIUM=/nowhere does not run" in done.stderr


def test_the_python_that_would_create_the_environment_is_checked_first(tmp_path: Path) -> None:
    """No python3 at all is one more package to install; one older than pyproject.toml's minimum
    cannot be fixed by a package and stops the script, saying which it found."""
    bin_dir = own_path(tmp_path, TAKEN | {"python3"})
    done, _ = run(tmp_path, bin_dir, "--check", RAGFAULT_PYTHON="python3")
    assert done.returncode == 1
    assert "Python 3 with its venv module, to create" in done.stderr
    assert "fonts-droid-fallback python3 python3-venv\n" in done.stderr
    stub(bin_dir, "python3", 'case "$1" in -V) echo "Python 3.9.2" ;; *) exit 1 ;; esac')
    done, venv = run(tmp_path, bin_dir, "--check", RAGFAULT_PYTHON="python3")
    assert done.returncode == 1
    assert "Python 3.9.2 (python3) is older than the 3.11 the project needs" in done.stderr
    assert not venv.exists()


def test_a_test_missing_a_program_fails_naming_the_script_unless_the_machine_goes_without_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(WITHOUT, raising=False)
    with pytest.raises(pytest.fail.Exception, match=r"no haproxy: \./scripts/test\.sh installs it"):
        missing("haproxy", "no haproxy")
    monkeypatch.setenv(WITHOUT, "chromium")
    with pytest.raises(pytest.fail.Exception):
        missing("haproxy", "no haproxy")
    monkeypatch.setenv(WITHOUT, "chromium,haproxy")
    with pytest.raises(pytest.skip.Exception, match=rf"no haproxy \({WITHOUT}=chromium,haproxy\)"):
        missing("haproxy", "no haproxy")
