"""The facts tables of a file store stand for their views exactly: each keeps the columns of its bundled
view's statement that do not come from the tables its view joins, and the tables settling writes are
read only by the facts computed again as traces settle (``facts.SETTLED``)."""

from __future__ import annotations

import json

import duckdb

from collector.model import TRACE_HEALTH
from collector.store.file import facts
from collector.store.sqlguard import _nodes
from queries import all_queries


def _tables_read(sql: str) -> set[str]:
    con = duckdb.connect()
    tree = json.loads(con.execute("SELECT json_serialize_sql($q)", {"q": sql}).fetchall()[0][0])
    assert not tree.get("error"), tree
    names: set[str] = set()
    ctes: set[str] = set()
    for node in _nodes(tree["statements"]):
        if node.get("type") == "BASE_TABLE":
            names.add(str(node["table_name"]))
        for cte in (node.get("cte_map") or {}).get("map", []):
            ctes.add(str(cte["key"]))
    return names - ctes


def test_the_facts_read_from_what_settling_writes_are_computed_again_as_traces_settle() -> None:
    settled_tables = {"steps", "step_documents"}
    reads = {t.name: _tables_read(facts.definition(t)) for t in facts.FACTS}
    assert reads[TRACE_HEALTH.name] & settled_tables  # the check sees such a read
    want = {name for name, read in reads.items() if read & settled_tables}
    assert {t.name for t in facts.SETTLED} == want


def test_each_facts_table_is_named_for_a_view_and_keeps_its_columns() -> None:
    views = {q.view: q for q in all_queries().values() if q.view}
    for table in facts.FACTS:
        view = facts.view_of(table)
        assert view in views and table.name == f"{view}_facts"
        returns = views[view].returns.replace("\\n", " ")
        for column in table.names:
            assert column in returns, (table.name, column)
