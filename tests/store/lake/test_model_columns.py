"""A lake created from scratch holds the one definition of a span, a step, a document and a verdict
(``collector.model``): its raw tables have the model's columns, types and NOT NULLs, and the views
users read (``spans``, ``steps``, ``step_documents``, ``evaluations``, ``evaluation_history``) the
model's columns and types, as the single file has (tests/store/test_model.py)."""

from __future__ import annotations

from collector.model import DOCUMENT, SPAN, STEP, VERDICT, VERDICT_HISTORY, Table
from collector.store.lake.store import LakeStore
from collector.store.lake.tables import RAW_TABLES
from tests.store.conftest import Lake


def described(store: LakeStore, name: str) -> list[tuple[str, str, bool]]:
    """(name, type, nullable) of a lake table or view, in order."""
    return [(str(r[0]), str(r[1]), r[2] == "YES") for r in store.con.execute(f"DESCRIBE {name}").fetchall()]


def test_a_new_lake_holds_the_models_columns(lake: Lake) -> None:
    store = LakeStore(lake.catalog, lake.data_path, extension_repository=False)
    try:
        tables: tuple[Table, ...] = (SPAN, STEP, DOCUMENT)
        for table in tables:
            assert described(store, RAW_TABLES[table.name]) == [
                (c.name, c.duck, c.nullable) for c in table.columns
            ], table.name
            # a view's columns are nullable whatever its tables say: names and types
            assert [(n, t) for n, t, _ in described(store, table.name)] == [
                (c.name, c.duck) for c in table.columns
            ]
        for view in (VERDICT.name, VERDICT_HISTORY):
            assert [(n, t) for n, t, _ in described(store, view)] == [
                (c.name, c.duck) for c in VERDICT.columns
            ]
        rows = [(n, t) for n, t, _ in described(store, "evaluation_rows")]
        assert rows == [(c.name, c.duck) for c in VERDICT.columns]
    finally:
        store.close()


def test_a_lake_opened_again_adds_no_column_from_a_nested_types_parts(lake: Lake) -> None:
    """The lake's own tables come from the file's migrations; a column of a nested type
    (``trace_coverage_facts.untexted_candidates``, a list of structs) is one column when a later open
    compares what the table has with what it should have, not one column per struct field."""
    from collector.store.lake.schema import _column_parts

    assert _column_parts("a VARCHAR, b STRUCT(x VARCHAR, y DECIMAL(10, 2))[], c BIGINT NOT NULL") == [
        "a VARCHAR",
        "b STRUCT(x VARCHAR, y DECIMAL(10, 2))[]",
        "c BIGINT NOT NULL",
    ]
    for _ in range(2):  # the second open finds every table and column made by the first
        store = LakeStore(lake.catalog, lake.data_path, extension_repository=False)
        try:
            columns = [n for n, _, _ in described(store, "trace_coverage_facts")]
        finally:
            store.close()
        assert "untexted_candidates" in columns and "chunk_id" not in columns
