"""What a file named by ``--db`` is, asked before a command opens it, so that no command writes over
data it did not make.

DuckDB allows one writing process a file and refuses to open one another process writes, which
protects a running server's database from every command that opens it. What that lock cannot
protect is a file deleted and created again (what the demo did) or a file that was never a ragfault
database: a text file, a JSON lines file, another application's DuckDB database. The checks here
read the file's header and, for a DuckDB file, its catalog (opened read-only by the store,
``collector.store.dbfile``, so the lock answers first when a server holds it), and refuse with one
line that names the file and what to do. The store is imported only where a catalog is read: a
refusal by name costs no engine import.

The demo marks the databases it makes (the ``ragfault_demo`` table), and replaces one only when
told ``--force`` and only when it holds nothing but what the demo sent.
"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from ragfault_core.errors import ConfigError

# a DuckDB file's main header: an 8-byte checksum, then the magic bytes
_MAGIC = b"DUCK"
_MAGIC_AT = 8
DEMO_TABLE = "ragfault_demo"  # the demo's mark (collector.store.dbfile.DEMO_TABLE: a test holds them equal)
# what the demo sends: its service and the datasets of its gold cases (``ragfault.demo``)
DEMO_SERVICES = ("helpdesk-demo",)
DEMO_DATASETS = ("helpdesk-demo", "helpdesk-conflicts")
# what ``serve`` says when another process holds its file
SERVE_HELD = "one server a file: stop that one first, or pass another --db"
_PID = re.compile(r"\(PID (\d+)\)")


@dataclass(frozen=True)
class Catalog:
    """The tables and views of a DuckDB file, and what they say about who made it."""

    tables: tuple[str, ...]

    @property
    def ragfault(self) -> bool:
        """Whether ragfault made it (its migrations table is there)."""
        return "schema_migrations" in self.tables

    @property
    def demo(self) -> bool:
        return DEMO_TABLE in self.tables

    @property
    def empty(self) -> bool:
        return not self.tables


def side_paths(db: str | Path) -> list[Path]:
    """The files a database leaves beside itself: its write-ahead log and the web UI's saved facts."""
    return [Path(f"{db}.wal"), Path(f"{db}.ui-facts")]


def kind(path: str | Path) -> str:
    """``missing``, ``directory``, ``duckdb`` or a few words saying what else the file is."""
    p = Path(path)
    if not p.exists():
        return "missing"
    if p.is_dir():
        return "directory"
    try:
        with p.open("rb") as f:
            head = f.read(64)
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror or exc}") from exc
    if head[_MAGIC_AT : _MAGIC_AT + len(_MAGIC)] == _MAGIC:
        return "duckdb"
    if not head:
        return "an empty file"
    if head.lstrip()[:1] in (b"{", b"["):
        return "a JSON or JSON lines file"
    if head.startswith(b"SQLite format"):
        return "an SQLite database"
    if head.startswith(b"PAR1"):
        return "a Parquet file"
    try:
        head.decode("utf-8")
    except UnicodeDecodeError:
        return "not a DuckDB database"
    return "a text file"


def refuse_other_file(path: str | Path, what_to_do: str) -> None:
    """Refuse ``path`` when it exists and is not a DuckDB database (one line naming what it is)."""
    k = kind(path)
    if k == "missing" or k == "duckdb":
        return
    if k == "directory":
        raise ConfigError(f"{path} is a directory, not a database file: {what_to_do}")
    raise ConfigError(f"{path} is not a DuckDB database ({k}): {what_to_do}")


def held_by_other(exc: BaseException) -> bool:
    """Whether opening failed because another process holds the file (DuckDB's lock)."""
    return "lock" in str(exc).lower()


def holder(exc: BaseException) -> str:
    """'another process (PID n)' from DuckDB's lock error."""
    m = _PID.search(str(exc))
    return f"another process (PID {m.group(1)})" if m else "another process"


def catalog(path: str | Path, *, what_to_do: str) -> Catalog:
    """The tables and views of the DuckDB file ``path``, opened read-only and closed again. A file
    another process writes is refused here with ``what_to_do``: the lock answers first."""
    from collector.store import dbfile

    try:
        return Catalog(dbfile.tables(path))
    except dbfile.CannotOpen as exc:
        if held_by_other(exc):
            raise ConfigError(
                f"{path} is in use by {holder(exc)} (a ragfault server on it?): {what_to_do}"
            ) from exc
        raise ConfigError(f"cannot open {path}: {str(exc).splitlines()[0]}") from exc


def check_writable(path: str | Path, *, held: str) -> None:
    """Refuse to write into ``path`` unless it is missing, an empty DuckDB database or a ragfault
    database no other process holds. ``held`` says what to do when a process holds it (which
    differs by command: ask that server, or pick another file)."""
    if str(path) in ("", ":memory:"):
        return
    refuse_other_file(
        path, "ragfault will not write into it; pass --db a .duckdb file (a new name creates one)"
    )
    if kind(path) == "missing":
        return
    cat = catalog(path, what_to_do=held)
    if not (cat.ragfault or cat.empty):
        raise ConfigError(
            f"{path} is a DuckDB database of something else (tables: {_names(cat.tables)}); ragfault "
            "will not write into it: pass --db a new file or a ragfault database"
        )


def _names(tables: tuple[str, ...], most: int = 5) -> str:
    more = f" and {len(tables) - most} more" if len(tables) > most else ""
    return ", ".join(tables[:most]) + more


def _foreign_data(path: str | Path) -> str | None:
    """What a demo database holds that the demo did not send (traces of another service, gold cases
    of another dataset), or None."""
    from collector.store import dbfile

    found = dbfile.foreign_values(path, DEMO_SERVICES, DEMO_DATASETS)
    if found is None:
        return None  # no such table yet: the demo stopped before the server made them
    what = ("traces of service", "gold cases of dataset")
    return (
        "; ".join(f"{w} {', '.join(values)}" for w, values in zip(what, found, strict=True) if values) or None
    )


def prepare_demo_file(path: str | Path, *, force: bool) -> None:
    """Make way for a demo database at ``path``: nothing there, or (with ``force``) an earlier demo
    database that nothing holds and that holds only what the demo sent, which is then removed with
    its write-ahead log and the UI's saved facts. Anything else is refused."""
    p = Path(path)
    if not p.parent.is_dir():
        raise ConfigError(f"cannot create {path}: the directory {p.parent} does not exist")
    another = "pass another --db, or stop that process first"
    refuse_other_file(path, "the demo never writes over a file: pass --db a new file")
    wal = Path(f"{path}.wal")
    if kind(path) == "missing":
        if wal.exists():
            raise ConfigError(
                f"{wal} is there without its database {path}: the demo will not start a database on it; "
                "remove it or pass another --db"
            )
        return
    cat = catalog(path, what_to_do=another)
    if not cat.demo:
        what = "a ragfault database" if cat.ragfault else ("a DuckDB database" if cat.tables else "a file")
        raise ConfigError(
            f"{path} is {what} the demo did not make; the demo writes a fresh file: pass --db a new file"
        )
    foreign = _foreign_data(path)
    if foreign:
        raise ConfigError(
            f"{path} was made by the demo but now holds data the demo did not send ({foreign}): "
            "the demo will not replace it; pass --db a new file"
        )
    if not force:
        raise ConfigError(f"{path} holds an earlier demo: pass --force to replace it, or --db a new file")
    p.unlink()
    for side in side_paths(path):
        if side.is_dir():
            shutil.rmtree(side)
        elif side.exists():
            side.unlink()


def mark_demo(path: str | Path) -> None:
    """Create ``path`` as a demo database: the ``ragfault_demo`` table, which lets a later
    ``demo --force`` tell it from a database it did not make."""
    from collector.store import dbfile

    dbfile.mark_demo(
        path,
        datetime.now(UTC).replace(tzinfo=None),
        "made by `ragfault demo`; `ragfault demo --force` may replace this file",
    )
