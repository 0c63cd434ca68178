"""Talking to a running ragfault server, or opening its file read-only when none runs."""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragfault_core.errors import ConfigError, QueryRefused

if TYPE_CHECKING:
    from collector.store import Store

DEFAULT_SERVER = "http://127.0.0.1:4318"
DEFAULT_DB = "./ragfault.duckdb"
# the --db and --server help every command that reads or writes the store shares
DB_HELP = (
    f"database file (default {DEFAULT_DB}, when no server answers); given, this file is used "
    "instead of a server, and a file a running server holds is refused: name that server with --server"
)
# what a command that writes a database file says to do when a running server holds that file
HELD = "pass --server URL to work through that server (see its startup log), or stop it first"
SERVER_HELP = f"server URL (default $RAGFAULT_SERVER or {DEFAULT_SERVER}); given, it must answer"


# how long /healthz may take to answer: a server named with --server must answer, and a busy one
# (its event loop serving a burst of exports on a loaded machine) can take longer than the half
# second that suits guessing whether one runs at the default address; a refused connection fails
# at once either way
NAMED_SERVER_PROBE_SECONDS = 10.0
GUESS_PROBE_SECONDS = 0.5


def server_url(explicit: str | None = None) -> str:
    return (explicit or os.environ.get("RAGFAULT_SERVER") or DEFAULT_SERVER).rstrip("/")


def target(server: str | None, db: str | None) -> tuple[str | None, str]:
    """Where a command works: (the server URL to call, or None) and the database file otherwise.

    ``--server`` given: that server, which must answer (with ``--db`` too, that file when it does
    not). ``--db`` alone: that file, even while a server answers elsewhere; a server holding the
    same file makes opening it fail (DuckDB's lock), with a hint to name that server instead.
    Neither: the server at ``$RAGFAULT_SERVER`` or the default URL when it answers, else the
    default file."""
    if server:
        url = server_url(server)
        if server_up(url, NAMED_SERVER_PROBE_SECONDS):
            return url, db or DEFAULT_DB
        if not db:
            raise ConfigError(f"no ragfault server answers at {url}")
        return None, db
    if db:
        return None, db
    url = server_url()
    return (url if server_up(url, GUESS_PROBE_SECONDS) else None), DEFAULT_DB


def require_database(db: str) -> None:
    """Refuse a database file that does not exist (a mistyped ``--db`` would create an empty one),
    saying which database files are there and whether a server answers (the user may have meant
    it), and a file that is not a DuckDB database (a JSON lines file given as ``--db``)."""
    from ragfault.dbfile import refuse_other_file

    path = Path(db)
    if path.is_file():
        refuse_other_file(db, "pass --db the .duckdb file `ragfault serve` or `ragfault demo` wrote")
        return
    if path.is_dir():
        raise ConfigError(f"{db} is a directory, not a database file: pass --db a .duckdb file")
    where = path.parent
    url = server_url()
    hint = (
        f"; a ragfault server answers at {url}: leave out --db to work through it" if server_up(url) else ""
    )
    if not where.is_dir():
        raise ConfigError(f"no database file {db}: the directory {where} does not exist{hint}")
    found = sorted(p.name for p in where.glob("*.duckdb"))
    there = f"database files in {where}: {', '.join(found)}" if found else f"no .duckdb file in {where}"
    raise ConfigError(
        f"no database file {db} ({there}){hint or '; pass --db FILE (`ragfault serve` creates one)'}"
    )


def open_hint(exc: ConfigError, db: str | None = None) -> ConfigError:
    """``exc`` from opening a database file, or, when another process holds the file, one line
    saying so and what to do."""
    from ragfault.dbfile import held_by_other, holder

    if not held_by_other(exc):
        return exc
    name = db or "the database file"
    return ConfigError(f"{name} is in use by {holder(exc)} (a ragfault server on it?): {HELD}")


def open_read_only(db: str) -> Store:
    """The ragfault database ``db`` opened read-only (a ``Store``), or one line saying why not: no
    such file, not a DuckDB database, held by a server, or a DuckDB database ragfault did not make."""
    require_database(db)
    from collector.store import Store
    from collector.store.schema import holds_ragfault

    try:
        store = Store(db, read_only=True)
    except ConfigError as exc:
        raise open_hint(exc, db) from exc
    if not holds_ragfault(store.con):
        store.con.close()
        raise ConfigError(
            f"{db} is a DuckDB database but not a ragfault one (it has no ragfault tables): pass --db "
            "the file `ragfault serve` or `ragfault demo` wrote"
        )
    return store


def _headers(token: str | None) -> dict[str, str]:
    h = {"Content-Type": "application/json"}
    token = token or os.environ.get("RAGFAULT_API_TOKEN")
    if token:
        h["Authorization"] = f"Bearer {token}"
    return h


def server_up(url: str, timeout: float = GUESS_PROBE_SECONDS) -> bool:
    try:
        with urllib.request.urlopen(url + "/healthz", timeout=timeout) as resp:
            return resp.status == 200
    except (urllib.error.URLError, OSError, ValueError):
        return False


def _send(req: urllib.request.Request, timeout: float) -> dict[str, Any]:
    """The JSON answer to ``req``; a 400 is ``QueryRefused`` with the server's detail, any other
    error status a ``ConfigError`` naming it."""
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return json.loads(resp.read() or b"{}")
    except urllib.error.HTTPError as exc:
        detail = exc.read().decode("utf-8", "replace")
        try:
            detail = json.loads(detail).get("detail", detail)
        except (ValueError, AttributeError):
            pass
        if exc.code == 400:
            raise QueryRefused(str(detail)) from exc
        raise ConfigError(f"server answered {exc.code}: {detail}") from exc


def post(
    url: str,
    path: str,
    body: bytes,
    token: str | None = None,
    content_type: str | None = None,
    timeout: float = 120,
    params: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """POST ``body`` to the server's API; ``params`` go into the query string URL-encoded, so a
    value taken from the user (a file name) is one value, whatever characters it holds."""
    headers = _headers(token)
    if content_type:
        headers["Content-Type"] = content_type
    target = url + path + _query(params)
    return _send(urllib.request.Request(target, data=body, headers=headers, method="POST"), timeout)


def _query(params: dict[str, Any] | None) -> str:
    """``?k=v&...`` URL-encoded (``&``, ``#``, ``=``, spaces and all), or nothing; ``None`` values
    are left out."""
    query = urllib.parse.urlencode({k: v for k, v in (params or {}).items() if v is not None})
    return f"?{query}" if query else ""


def get(
    url: str, path: str, params: dict[str, Any] | None = None, token: str | None = None, timeout: float = 120
) -> dict[str, Any]:
    """GET a JSON answer from the server's API."""
    return _send(urllib.request.Request(url + path + _query(params), headers=_headers(token)), timeout)


def sql(
    query: str,
    params: dict[str, Any] | None = None,
    *,
    db: str | None = None,
    server: str | None = None,
    token: str | None = None,
    row_cap: int = 10_000,
    timeout: float = 60,
    lake: tuple[str, str] | None = None,
) -> dict[str, Any]:
    """Run a read-only query through the server when one answers, else on the file read-only; with
    ``lake`` (catalog URL, data path), on that DuckLake attached read-only (a read-only node)."""
    if lake is not None:
        return _sql_on_lake(query, params, lake, row_cap=row_cap, timeout=timeout)
    url, db = target(server, db)
    if url is not None:
        body = json.dumps({"sql": query, "params": params or {}, "max_rows": row_cap}).encode()
        return post(url, "/api/v1/sql", body, token)
    from collector.store.file.connect import limit_operator_memory
    from collector.store.reader import run_select

    store = open_read_only(db)
    try:
        con = store.cursor()
        limit_operator_memory(con, "256MB")
        return run_select(
            con, query, params, row_cap=row_cap, timeout=timeout, max_bytes=256 << 20, user=True
        ).as_dict()
    finally:
        store.con.close()


def add_lake_arguments(p: Any) -> None:
    """``--catalog`` and ``--data-path``: read a DuckLake directly, read-only (a read-only node)."""
    p.add_argument(
        "--catalog",
        help="read a DuckLake directly, read-only, instead: its catalog, postgresql://USER@HOST:PORT/DB "
        "(with --data-path; default: none, use the server or --db)",
    )
    p.add_argument("--data-path", help="the lake's data directory (with --catalog; default: none)")


def lake_of(args: Any) -> tuple[str, str] | None:
    """(catalog, data path) from ``add_lake_arguments``' options, or None."""
    catalog, data_path = getattr(args, "catalog", None), getattr(args, "data_path", None)
    if bool(catalog) != bool(data_path):
        raise ConfigError("--catalog and --data-path go together: the lake's catalog and its data directory")
    return (str(catalog), str(data_path)) if catalog and data_path else None


def _sql_on_lake(
    query: str, params: dict[str, Any] | None, lake: tuple[str, str], *, row_cap: int, timeout: float
) -> dict[str, Any]:
    from collector.store.file.connect import limit_operator_memory
    from collector.store.lake.store import LakeStore
    from collector.store.reader import run_select

    catalog, data_path = lake
    if not Path(data_path).is_dir():
        raise ConfigError(f"no lake data directory {data_path}")
    repository = os.environ.get("RAGFAULT_EXTENSION_REPOSITORY", "true").strip().lower()
    store = LakeStore(
        catalog,
        data_path,
        read_only=True,
        extension_repository=repository not in ("0", "false", "no", "off"),
        extension_dir=os.environ.get("RAGFAULT_EXTENSION_DIR") or None,
    )
    try:
        con = store.cursor()
        limit_operator_memory(con, "256MB")
        return run_select(
            con, query, params, row_cap=row_cap, timeout=timeout, max_bytes=256 << 20, user=True
        ).as_dict()
    finally:
        store.close()
