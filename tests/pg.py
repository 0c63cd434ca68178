"""A throwaway PostgreSQL cluster for tests: ``initdb`` and ``pg_ctl`` from Debian's ``postgresql``
package, on a free port in a temporary directory, removed afterwards.

PostgreSQL refuses to run as root; as root the cluster belongs to the ``postgres`` user (created by
the package) and every command runs through ``runuser``. Authentication is ``trust`` on 127.0.0.1
only, as the tests connect from this machine.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tests.served import free_port

SUPERUSER = "ragfault"


def pg_bindir() -> Path | None:
    """The directory of ``initdb`` and ``pg_ctl``: Debian keeps them in /usr/lib/postgresql/<v>/bin."""
    for name in ("initdb", "pg_ctl"):
        found = shutil.which(name)
        if (
            found
            and Path(found).resolve().parent.joinpath("pg_ctl" if name == "initdb" else "initdb").exists()
        ):
            return Path(found).resolve().parent
    versions = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(Path(p).parts[-3]))
    return Path(versions[-1]).parent if versions else None


@dataclass
class Postgres:
    host: str
    port: int
    user: str
    root: Path
    _run_as: list[str]
    _bindir: Path

    def url(self, db: str) -> str:
        return f"postgresql://{self.user}@{self.host}:{self.port}/{db}"

    def create_database(self, name: str) -> str:
        """A new empty database; returns its URL."""
        self._psql("postgres", f'CREATE DATABASE "{name}"')
        return self.url(name)

    def query(self, db: str, sql: str) -> str:
        """``sql`` run by psql in database ``db``; its unaligned, tuples-only output."""
        return self._psql(db, sql)

    @contextmanager
    def session(self, db: str) -> Iterator[subprocess.Popen[str]]:
        """An interactive psql on ``db`` (statements written to its stdin, output read from its
        stdout, line by line): a transaction held open while another client runs. Ended on leaving."""
        proc = subprocess.Popen(
            [*self._psql_args(db), "-f", "-"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1,
        )  # fmt: skip
        try:
            yield proc
        finally:
            if proc.stdin:
                proc.stdin.close()
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()

    def _psql_args(self, db: str) -> list[str]:
        psql = self._bindir / "psql"
        cmd = [str(psql) if psql.exists() else "psql", "-X", "-q", "-v", "ON_ERROR_STOP=1"]
        return cmd + ["-h", self.host, "-p", str(self.port), "-U", self.user, "-d", db, "-At"]

    def _psql(self, db: str, sql: str) -> str:
        cmd = [*self._psql_args(db), "-c", sql]
        return subprocess.run(cmd, check=True, capture_output=True, text=True, timeout=60).stdout


@contextmanager
def postgres_cluster() -> Iterator[Postgres]:
    """Start a cluster, yield it, stop it (``-m immediate``) and remove its directory."""
    bindir = pg_bindir()
    if bindir is None:
        raise FileNotFoundError("initdb and pg_ctl not found (./scripts/test.sh installs them)")
    run_as: list[str] = []
    root = Path(tempfile.mkdtemp(prefix="ragfault-pg-"))
    if os.geteuid() == 0:
        owner = "postgres"
        try:
            entry = pwd.getpwnam(owner)
        except KeyError:
            owner, entry = "nobody", pwd.getpwnam("nobody")
        os.chown(root, entry.pw_uid, entry.pw_gid)
        os.chmod(root, 0o700)
        run_as = ["runuser", "-u", owner, "--"]
    data, port = root / "data", free_port()
    try:
        subprocess.run(
            [*run_as, str(bindir / "initdb"), "-D", str(data), "-A", "trust", "-U", SUPERUSER, "-E", "UTF8",
             "--no-sync"],
            check=True, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        options = f"-p {port} -k {root} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200"
        subprocess.run(
            [*run_as, str(bindir / "pg_ctl"), "-D", str(data), "-o", options, "-l", str(root / "log"), "-w",
             "-t", "60", "start"],
            check=True, capture_output=True, text=True, timeout=90,
        )  # fmt: skip
        try:
            yield Postgres("127.0.0.1", port, SUPERUSER, root, run_as, bindir)
        finally:
            subprocess.run(
                [*run_as, str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop"],
                capture_output=True, timeout=60,
            )  # fmt: skip
    finally:
        shutil.rmtree(root, ignore_errors=True)
