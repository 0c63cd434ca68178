"""Every statement of the store's own SQL (``collector/store/sql/`` and each backend's
``collector/store/<backend>/sql/``) says what it is."""

from __future__ import annotations

from pathlib import Path

import pytest

import collector.store
from collector.store.sqlfiles import all_statements, sql, statement


@pytest.mark.parametrize("key", sorted(all_statements()) or ["(none)"])
def test_each_statement_has_a_header_and_declares_its_parameters(key: str) -> None:
    if key == "(none)":
        pytest.skip("no store statements yet")
    q = all_statements()[key]
    assert q.name == key.rsplit("/", 1)[1], f"{key}: -- name: says {q.name!r}"
    assert q.description, f"{key}: no -- description:"
    assert q.used_params() <= set(q.params), (
        f"{key}: uses {sorted(q.used_params() - set(q.params))} undeclared"
    )


def test_an_unknown_statement_is_named_in_the_error() -> None:
    with pytest.raises(KeyError, match="settle/no_such_statement"):
        statement("settle", "no_such_statement")


def test_every_statement_file_of_the_store_and_its_backends_is_loaded() -> None:
    """The files on disk, shared (``sql/<area>/``) and each backend's own (``<backend>/sql/<area>/``),
    are exactly what ``all_statements`` sees: a backend's statement is not left out of the checks."""
    root = Path(collector.store.__file__).parent
    on_disk = {
        (f"{p.parents[2].name}/" if p.parents[2] != root else "") + f"{p.parent.name}/{p.stem}"
        for p in root.rglob("*.sql")
        if "migrations" not in p.relative_to(root).parts
    }
    assert on_disk == set(all_statements())
    assert any(k.startswith("lake/") for k in on_disk)  # the lake's own are among them


def test_a_backend_statement_is_loaded_from_its_package() -> None:
    """``lake/work`` is ``collector/store/lake/sql/work/``; the same name in the shared ``sql/`` is
    another statement (the file's side of a pair)."""
    lake = statement("lake/work", "pending")
    shared = statement("verdicts", "pending")
    assert lake.name == shared.name == "pending"
    assert lake.sql != shared.sql
    assert "_others" in sql("lake/work", "pending")  # the traces other collectors hold are left out
    with pytest.raises(KeyError, match="lake/work/no_such_statement"):
        statement("lake/work", "no_such_statement")
