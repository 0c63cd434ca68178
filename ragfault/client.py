"""Talking to a running ragfault server, or opening its file read-only when none runs."""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

from collector.errors import ConfigError, QueryRefused

DEFAULT_SERVER = "http://127.0.0.1:4318"
DEFAULT_DB = "./ragfault.duckdb"
# the --db and --server help every command that reads or writes the store shares
DB_HELP = f"database file (default {DEFAULT_DB}); given, it is opened even while a server runs"
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
    not). ``--db`` alone: that file, even while a server answers elsewhere (a server holding the
    same file makes opening it fail, with a hint). Neither: the server at ``$RAGFAULT_SERVER`` or
    the default URL when it answers, else the default file."""
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
    saying which database files are there."""
    path = Path(db)
    if path.is_file():
        return
    where = path.parent
    if not where.is_dir():
        raise ConfigError(f"no database file {db}: the directory {where} does not exist")
    found = sorted(p.name for p in where.glob("*.duckdb"))
    there = f"database files in {where}: {', '.join(found)}" if found else f"no .duckdb file in {where}"
    raise ConfigError(f"no database file {db} ({there}); pass --db FILE (`ragfault serve` creates one)")


def open_hint(exc: ConfigError) -> ConfigError:
    """``exc`` from opening a database file, with what to do when another process holds it."""
    if "lock" not in str(exc).lower():
        return exc
    return ConfigError(f"{exc} (is a server running on this file? pass --server instead of --db)")


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
) -> dict[str, Any]:
    headers = _headers(token)
    if content_type:
        headers["Content-Type"] = content_type
    return _send(urllib.request.Request(url + path, data=body, headers=headers, method="POST"), timeout)


def get(
    url: str, path: str, params: dict[str, Any] | None = None, token: str | None = None, timeout: float = 120
) -> dict[str, Any]:
    """GET a JSON answer from the server's API."""
    query = urllib.parse.urlencode({k: v for k, v in (params or {}).items() if v is not None})
    return _send(
        urllib.request.Request(url + path + (f"?{query}" if query else ""), headers=_headers(token)), timeout
    )


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
    from collector.store import Store
    from collector.store.duck import limit_operator_memory
    from collector.store.reader import run_select

    if not Path(db).exists():
        raise ConfigError(f"no server at {server_url()} and no database file {db}")
    try:
        store = Store(db, read_only=True)
    except ConfigError as exc:
        raise open_hint(exc) from exc
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
    from collector.store.duck import limit_operator_memory
    from collector.store.lake import LakeStore
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
