"""Every statement of the store's own SQL (``collector/store/sql/``) says what it is."""

from __future__ import annotations

import pytest

from collector.store.sqlfiles import all_statements, statement


@pytest.mark.parametrize("key", sorted(all_statements()) or ["(none)"])
def test_each_statement_has_a_header_and_declares_its_parameters(key: str) -> None:
    if key == "(none)":
        pytest.skip("no store statements yet")
    q = all_statements()[key]
    assert q.name == key.split("/")[1], f"{key}: -- name: says {q.name!r}"
    assert q.description, f"{key}: no -- description:"
    assert q.used_params() <= set(q.params), (
        f"{key}: uses {sorted(q.used_params() - set(q.params))} undeclared"
    )


def test_an_unknown_statement_is_named_in_the_error() -> None:
    with pytest.raises(KeyError, match="settle/no_such_statement"):
        statement("settle", "no_such_statement")
