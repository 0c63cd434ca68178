"""The views of the bundled queries (a ``queries/`` file with a ``-- view:`` line; docs/architecture.md, The interface contract), made
on the store when it opens (``sql/views/create_view.sql``)."""

from __future__ import annotations

from collector.store.base import Con, operation
from collector.store.templates import filled


@operation
def create_views(tx: Con) -> list[str]:
    """(Re)create every view-declaring query; views depend on tables only, in file order."""
    from queries import all_queries

    made = []
    for q in all_queries().values():
        if q.view:
            tx.execute(filled("views", "create_view", view=q.view, body=q.sql))
            made.append(q.view)
    return made
