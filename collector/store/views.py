"""The views of the bundled queries (a ``queries/`` file with a ``-- view:`` line; docs/architecture.md, The interface contract), made
on the store when it opens (``sql/views/create_view.sql``)."""

from __future__ import annotations

from collections.abc import Mapping

from collector.store.base import Con, operation
from collector.store.templates import filled


@operation
def create_views(tx: Con, bodies: Mapping[str, str] | None = None) -> list[str]:
    """(Re)create every view-declaring query; views depend on tables only, in file order. ``bodies``:
    a backend's own statement of some views, by name (a file store's views backed by facts, which give
    the bundled statement's rows: ``collector.store.file.facts``)."""
    from queries import all_queries

    made = []
    for q in all_queries().values():
        if q.view:
            body = (bodies or {}).get(q.view, q.sql)
            tx.execute(filled("views", "create_view", view=q.view, body=body))
            made.append(q.view)
    return made


def view_statement(view: str) -> str:
    """What runs a bundled query that declares ``view``: every row of the view (``sql/views/read_view``)."""
    return filled("views", "read_view", view=view)
