"""The dashboard's facts kept across restarts: saved beside the database file (``<db>.ui-facts/``: one
Arrow IPC file a table and ``facts.json`` naming them and the version and ``form`` they were computed
at) and loaded (memory-mapped) by a server starting. Saved facts of another ``form`` (another version
of the statements or of the attribution view) are not used."""

from __future__ import annotations

import contextlib
import json
import os
import time
from pathlib import Path
from typing import Any

import pyarrow as pa

from collector.store.ui_facts_tables import PARTS, TABLES, Facts


def save(path: Path, facts: Facts, key: tuple[Any, ...], shape: str) -> None:
    """Write the facts to the directory ``path``: each table a new Arrow IPC file, then ``facts.json``
    naming them (replaced in one rename, so a reader sees the old set or the new one), then the files
    of earlier saves removed."""
    path.mkdir(parents=True, exist_ok=True)
    stamp = f"{time.time_ns()}-{os.getpid()}"
    files = {}
    for name, table in {"stamps": facts.stamps, **facts.tables}.items():
        file = f"{name}.{stamp}.arrow"
        # one chunk, one dictionary a column: the IPC file format holds no dictionary replacement
        table = table.unify_dictionaries().combine_chunks()
        with pa.OSFile(str(path / file), "wb") as sink, pa.ipc.new_file(sink, table.schema) as out:
            out.write_table(table)
        files[name] = file
    meta = {"form": shape, "key": list(key), "files": files, "saved_at": time.time()}
    tmp = path / f"facts.json.{stamp}"
    tmp.write_text(json.dumps(meta), encoding="utf-8")
    os.replace(tmp, path / "facts.json")
    for old in path.iterdir():
        if old.name != "facts.json" and old.name not in files.values():
            with contextlib.suppress(OSError):
                old.unlink()


def load(path: Path, shape: str) -> tuple[tuple[Any, ...], Facts] | None:
    """The facts saved in ``path`` and the version they were computed at; None when there are none, or
    they are of another ``form``, or cannot be read."""
    try:
        meta = json.loads((path / "facts.json").read_text(encoding="utf-8"))
        if meta.get("form") != shape:
            return None
        tables = {
            name: pa.ipc.open_file(pa.memory_map(str(path / file))).read_all()
            for name, file in meta["files"].items()
        }
    except (OSError, ValueError, KeyError, pa.ArrowException):
        return None
    stamps = tables.pop("stamps", None)
    if stamps is None or set(tables) != {*TABLES, *PARTS}:
        return None
    return tuple(meta["key"]), Facts(stamps, tables)
