"""Attaching a lake: the DuckDB extensions it needs and the catalog's connection string.

The extensions load without network: from DuckDB's extension repository when it answers, else from
the ``duckdb-extension-*`` packages on PyPI (``pip install 'ragfault[lake]'``), else from a local
directory (``extension_dir``). The catalog is named by a ``postgresql://`` URL, which the postgres
extension takes as a libpq key/value string; logs and errors show it without its password.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from urllib.parse import unquote, urlsplit

import duckdb

from collector.store.lake import ddl
from ragfault_core.errors import ConfigError

LAKE = "lake"  # the attached lake's name; every cursor uses it
ATTACH_ATTEMPTS = 8
# (PyPI package, extension file name) of each extension the lake needs, in load order
EXTENSIONS = (
    ("duckdb_extension_postgres_scanner", "postgres_scanner"),
    ("duckdb_extension_ducklake", "ducklake"),
)


# --- extensions ---------------------------------------------------------------------------------


def package_file(package: str, name: str) -> Path | None:
    """The extension file a ``duckdb-extension-*`` wheel installs (``<package>/extensions/v<X.Y.Z>/``),
    for this DuckDB's version, if that package is installed."""
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.origin:
        return None
    path = Path(spec.origin).parent / "extensions" / f"v{duckdb.__version__}" / f"{name}.duckdb_extension"
    return path if path.is_file() else None


def _dir_file(directory: Path, name: str) -> Path | None:
    """``name.duckdb_extension`` directly in ``directory``, or in DuckDB's own extension-directory
    layout below it (``v<version>/<platform>/``)."""
    flat = directory / f"{name}.duckdb_extension"
    if flat.is_file():
        return flat
    for found in sorted(directory.glob(f"v{duckdb.__version__}/*/{name}.duckdb_extension")):
        return found
    return None


def _loaded(con: duckdb.DuckDBPyConnection, name: str) -> bool:
    row = con.execute("SELECT loaded FROM duckdb_extensions() WHERE extension_name = ?", [name]).fetchone()
    return bool(row and row[0])


def load_extensions(
    con: duckdb.DuckDBPyConnection,
    *,
    repository: bool | str = True,
    packages: bool = True,
    directory: str | Path | None = None,
) -> dict[str, str]:
    """Load ``postgres_scanner`` and ``ducklake`` into ``con``: from an extension repository
    (``INSTALL`` then ``LOAD``; ``True`` is DuckDB's own, a string another URL or local directory) when
    it answers, else from the installed PyPI package, else from ``directory``. Returns where each came
    from; raises ``ConfigError`` with one line naming every place tried."""
    origin: dict[str, str] = {}
    for package, name in EXTENSIONS:
        tried: list[str] = []
        if _loaded(con, name):
            origin[name] = "already loaded"
            continue
        if repository:
            source = "" if repository is True else f" FROM '{quote(str(repository))}'"
            where = "DuckDB's extension repository" if repository is True else f"repository {repository}"
            try:
                con.execute(f"INSTALL {name}{source}")
                con.execute(f"LOAD {name}")
                origin[name] = where
                continue
            except duckdb.Error as exc:
                tried.append(f"{where} ({first_line(exc)})")
        candidates: list[tuple[str, Path | None]] = []
        if packages:
            candidates.append((f"package {package.replace('_', '-')}", package_file(package, name)))
        if directory:
            candidates.append((f"directory {directory}", _dir_file(Path(directory), name)))
        for where, path in candidates:
            if path is None:
                tried.append(f"{where} (no {name}.duckdb_extension for DuckDB {duckdb.__version__})")
                continue
            try:
                con.execute(f"LOAD '{quote(str(path))}'")
                origin[name] = str(path)
                break
            except duckdb.Error as exc:
                tried.append(f"{path} ({first_line(exc)})")
        if name not in origin:
            if not tried:
                tried.append("nothing (repository, packages and directory all off)")
            raise ConfigError(
                f"cannot load the DuckDB extension {name} for DuckDB {duckdb.__version__}; tried: "
                + "; ".join(tried)
                + ". Install 'ragfault[lake]' or set extension_dir"
            )
    return origin


def first_line(exc: BaseException) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


def quote(s: str) -> str:
    return s.replace("'", "''")


# --- catalog ------------------------------------------------------------------------------------


def catalog_conninfo(url: str) -> str:
    """``postgresql://USER[:PASSWORD]@HOST[:PORT]/DB[?k=v]`` -> a libpq key/value string (what the
    postgres extension is handed); raises ``ConfigError`` on anything else."""
    parts = urlsplit(url)
    if parts.scheme not in ("postgresql", "postgres") or not parts.hostname or not parts.path.strip("/"):
        raise ConfigError(f"catalog must be postgresql://USER@HOST:PORT/DB, got {url!r}")
    fields = {"host": parts.hostname, "dbname": unquote(parts.path.strip("/"))}
    try:
        if parts.port:
            fields["port"] = str(parts.port)
    except ValueError as exc:
        raise ConfigError(f"catalog {url!r}: {exc}") from exc
    if parts.username:
        fields["user"] = unquote(parts.username)
    if parts.password:
        fields["password"] = unquote(parts.password)
    for pair in filter(None, parts.query.split("&")):
        key, _, value = pair.partition("=")
        if not re.fullmatch(r"[a-z_]+", key):
            raise ConfigError(f"catalog {url!r}: bad parameter {key!r}")
        fields[key] = unquote(value)
    return " ".join(f"{k}={_libpq_value(v)}" for k, v in fields.items())


def _libpq_value(v: str) -> str:
    if v and not re.search(r"[\s'\\]", v):
        return v
    return "'" + v.replace("\\", "\\\\").replace("'", "\\'") + "'"


def attach(
    con: duckdb.DuckDBPyConnection, catalog: str, conninfo: str, data_path: str, *, read_only: bool
) -> None:
    """Attach the lake of ``catalog`` (its URL; ``conninfo``: ``catalog_conninfo`` of it) and
    ``data_path`` to ``con`` as ``LAKE``, and use it.
    Collectors that start on a new catalog at the same moment each create its tables, and all but
    one fail on PostgreSQL's unique index of type names: they attach again once the catalog exists.
    Raises ``ConfigError`` naming the catalog (without its password)."""
    options = [f"DATA_PATH '{quote(data_path.rstrip('/') + '/')}'"]
    if read_only:
        options.append("READ_ONLY")
    statement = f"ATTACH 'ducklake:postgres:{quote(conninfo)}' AS {LAKE} ({', '.join(options)})"
    try:
        ddl.idempotent(
            lambda: con.execute(statement),
            what="the lake's catalog",
            retry_if=lambda exc: "initialize DuckLake" in str(exc) or ddl.made_meanwhile(exc),
            attempts=ATTACH_ATTEMPTS,
        )
    except duckdb.Error as exc:
        raise ConfigError(f"cannot attach the lake at {redact(catalog)}: {first_line(exc)}") from exc
    con.execute(f"USE {LAKE}")


def redact(url: str) -> str:
    """The catalog URL without its password (for logs and errors)."""
    return re.sub(r"(://[^:/@]+):[^@]*@", r"\1:***@", url)
