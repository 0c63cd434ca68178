"""The facts tables of a file store stand for their views exactly: each keeps the columns of its bundled
view's statement that do not come from the tables its view joins."""

from __future__ import annotations

from collector.store.file import facts
from queries import all_queries


def test_each_facts_table_is_named_for_a_view_and_keeps_its_columns() -> None:
    views = {q.view: q for q in all_queries().values() if q.view}
    for table in facts.FACTS:
        view = facts.view_of(table)
        assert view in views and table.name == f"{view}_facts"
        returns = views[view].returns.replace("\\n", " ")
        for column in table.names:
            assert column in returns, (table.name, column)
