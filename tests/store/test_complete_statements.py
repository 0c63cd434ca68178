"""Every statement of the store is complete as its file says: it declares exactly the parameters its
body uses, and what is optional in it (a received window, an evaluated_at bound, a filter) is a
parameter with its NULL case, not text the store's Python appends. A window given that way still lets
DuckDB skip the row groups outside it: the values are bound before DuckDB plans, so
``$lo IS NULL OR received_at BETWEEN $lo AND $hi`` is planned as the plain range."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pytest

from collector.store import Store
from collector.store.file.connect import ROW_GROUP_ROWS
from collector.store.reader import window_params
from collector.store.sqlfiles import all_statements, sql

_PART = re.compile(r"\{([a-z_]+)\}")

# ``{part}``s that stand for what a parameter cannot be: an identifier (a table, a view, columns, the
# columns of a key), a statement put in another (``body``) or an ORDER BY list chosen from a fixed list
# of sorts. Anywhere.
IDENTIFIER_PARTS = {"table", "columns", "key", "view", "body", "order"}

# the other parts left, each where it is and why (a part here must not spread to other statements)
COMPOSED_PARTS = {
    # the facts of some traces or of all: the condition on _ui_ids has a subquery, which would be
    # planned as a join over every trace even when a parameter made it true (as the trace list's)
    "ui/facts_attribution": {"ids"},
    "ui/facts_layers": {"ids"},
    "ui/facts_refusals": {"cells", "ids"},
    # the file a --db probe attaches: ATTACH takes its file only as a literal (DuckDB's parser refuses a
    # parameter there), quoted by collector.store.dbfile
    "dbfile/attach_probe": {"path"},
    "dbfile/attach_made": {"path"},
    # run in one multi-statement commit, which takes no parameters
    "lake/ingest/insert_content_events": {"events"},
}

# statements whose header declares parameters their body does not use, because a part above brings
# them in; the test fails once one of them is complete (then it leaves this list)
INCOMPLETE: dict[str, str] = {}


@pytest.mark.parametrize("key", sorted(all_statements()))
def test_each_statement_declares_exactly_the_parameters_its_body_uses(key: str) -> None:
    q = all_statements()[key]
    declared, used = set(q.params), q.used_params()
    assert used <= declared, f"{key}: uses {sorted(used - declared)} undeclared"
    if key in INCOMPLETE:
        assert declared - used, f"{key} is complete now: take it off INCOMPLETE"
    else:
        assert declared == used, f"{key}: declares {sorted(declared - used)} its body never uses"


@pytest.mark.parametrize("key", sorted(all_statements()))
def test_no_statement_has_a_part_for_a_value(key: str) -> None:
    body = "\n".join(ln for ln in all_statements()[key].sql.splitlines() if not ln.lstrip().startswith("--"))
    parts = set(_PART.findall(body)) - IDENTIFIER_PARTS
    assert parts == COMPOSED_PARTS.get(key, set()) - IDENTIFIER_PARTS, (
        f"{key}: {{part}}s {sorted(parts)}: a value, window or optional filter is a parameter"
    )


def test_the_parts_left_are_in_statements_that_exist() -> None:
    assert set(COMPOSED_PARTS) | set(INCOMPLETE) <= set(all_statements())


# --- a window as parameters still skips the row groups outside it ---------------------------------

T0 = datetime(2026, 11, 1)  # (received_at is a TIMESTAMP: read back, a window is naive)
GROUPS = 8


@pytest.fixture(scope="module")
def steps_file(tmp_path_factory: pytest.TempPathFactory) -> Iterator[duckdb.DuckDBPyConnection]:
    """A store's file whose ``steps`` and ``step_documents`` hold ``GROUPS`` row groups, one trace per
    ten rows, received a second apart in the order they were written (as ingest writes them), opened
    again without the store's sandbox (which locks the profiling settings)."""
    path = tmp_path_factory.mktemp("window") / "w.duckdb"
    store = Store(path)
    n = GROUPS * ROW_GROUP_ROWS
    at = f"TIMESTAMP '{T0.isoformat()}' + i * INTERVAL 1 second"
    store.con.execute(
        f"INSERT INTO steps (trace_id, span_id, step_type, received_at) "
        f"SELECT 't' || (i // 10), 's' || i, 'retrieval', {at} FROM range({n}) r(i)"
    )
    store.con.execute(
        f"INSERT INTO step_documents (trace_id, span_id, stage, position, content, source, received_at) "
        f"SELECT 't' || (i // 10), 's' || i, 'candidate', 0, 'text ' || i, 'span', {at} FROM range({n}) r(i)"
    )
    store.close()
    con = duckdb.connect(str(path), read_only=True)
    yield con
    con.close()


def _scanned(
    con: duckdb.DuckDBPyConnection, tmp: Path, text: str, params: dict[str, Any], ids: list[str]
) -> tuple[int, int]:
    """(rows returned, rows DuckDB scanned) of ``text`` over the traces ``ids`` (as ``_ids``)."""
    out = tmp / "profile.json"
    con.execute("PRAGMA enable_profiling = 'json'")
    con.execute(f"SET profiling_output = '{out}'")
    try:  # DuckDB 1.x names the metric to collect; 2.x collects it in its detailed mode
        con.execute("""SET custom_profiling_settings = '{"CUMULATIVE_ROWS_SCANNED": "true"}'""")
    except duckdb.CatalogException:
        con.execute("SET profiling_mode = 'detailed'")
    con.register("_ids", pa.table({"trace_id": pa.array(ids, pa.string())}))
    try:
        rows = con.execute(text, params).fetchall()
    finally:
        con.unregister("_ids")
        con.execute("PRAGMA disable_profiling")
    profile = json.loads(out.read_text())
    scanned = (
        profile["query"]["total_rows_scanned"] if "query" in profile else profile["cumulative_rows_scanned"]
    )
    return len(rows), int(scanned)


@pytest.mark.parametrize("name", ["trace_steps", "assembly_docs"])
def test_a_window_as_parameters_skips_the_row_groups_outside_it(
    steps_file: duckdb.DuckDBPyConnection, tmp_path: Path, name: str
) -> None:
    """Traces in the sixth row group: with their window the scan reads that group (and at most the
    next); without one, more (how many the join's own filter on the ids spares varies)."""
    first = 5 * ROW_GROUP_ROWS + 100
    ids = [f"t{(first + k * 10) // 10}" for k in range(10)]
    window = (T0 + timedelta(seconds=first), T0 + timedelta(seconds=first + 99))
    extra: dict[str, Any] = {"ranked": ["candidate"]} if name == "assembly_docs" else {}
    text = sql("settle", name)
    found, scanned = _scanned(steps_file, tmp_path, text, {**window_params(window), **extra}, ids)
    whole, scanned_all = _scanned(steps_file, tmp_path, text, {**window_params(None), **extra}, ids)
    assert found == whole == 100
    assert scanned <= 2 * ROW_GROUP_ROWS + len(ids), (scanned, scanned_all)
    assert scanned_all > scanned, (scanned, scanned_all)


def test_statements_name_the_databases_as_they_are_attached() -> None:
    """The catalog and the lake are attached under fixed names, which these statements spell out."""
    from collector.store.lake.attach import LAKE
    from collector.store.lake.claims import CATALOG_DB

    for name in ("catalog_execute", "catalog_query"):
        assert f"'{CATALOG_DB}'" in sql("lake/claims", name)
    for name in (
        "flush_inlined",
        "merge_files",
        "expire_snapshots",
        "cleanup_files",
        "data_files",
        "lake_tables",
    ):
        assert f"'{LAKE}'" in sql("maintenance", name)
