"""References: gold cases and knowledge-base documents (loading them, reading them back, the traces a
reload affects, and filling stored textless documents from the registry).

Rows go in and come out as plain values (dicts in, tuples out); validating them is the evaluators'
business (``evaluators.gold``). The statements are ``sql/references/*.sql``.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from collector.store.backend import is_lake
from collector.store.base import Con, QueryFn, operation
from collector.store.file import facts
from collector.store.lake import work as lake_work
from collector.store.rows import KBRow, LoadStamp
from collector.store.sqlfiles import sql
from collector.store.tx import transaction
from collector.store.verdicts import registered

_CASE_TYPES = {
    "answerable": pa.bool_(),
    "must_retrieve": pa.bool_(),
    "negative_doc_ids": pa.list_(pa.string()),
    "user_scope": pa.list_(pa.string()),
    "as_of": pa.timestamp("us"),
    "loaded_at": pa.timestamp("us"),
}
_KB_TYPES = {
    "valid_from": pa.timestamp("us"),
    "valid_to": pa.timestamp("us"),
    "acl": pa.list_(pa.string()),
    "loaded_at": pa.timestamp("us"),
}


def _table(rows: list[dict[str, Any]], types: dict[str, pa.DataType]) -> pa.Table:
    cols = list(rows[0].keys())
    return pa.table({c: pa.array([r[c] for r in rows], types.get(c, pa.string())) for c in cols})


@operation
def stamp(con: Con) -> LoadStamp:
    """Counts and latest load times of gold cases and documents: it changes with every load."""
    return LoadStamp._make(
        con.execute(sql("references", "stamp")).fetchall()[0]
    )  # fetchall: duckdb 2 keeps a fetchone() open


@operation
def gold_rows(con: Con) -> list[tuple[str, str, str, str]]:
    """Every stored gold case: (case id, normalized query or '', query, stored JSON)."""
    return [(r[0], r[1], r[2], r[3]) for r in con.execute(sql("references", "gold_rows")).fetchall()]


@operation
def kb_rows(con: Con) -> list[KBRow]:
    """Every stored document: (doc_id, version, valid_from, valid_to, superseded_by, acl, title,
    content, metadata as JSON text)."""
    return [KBRow._make(r) for r in con.execute(sql("references", "kb_rows")).fetchall()]


@operation
def upsert_gold(con: Con, rows: list[dict[str, Any]]) -> None:
    """Store gold cases (``evaluators.gold.case_row`` dicts); a reloaded case replaces the old one."""
    if not rows:
        return
    with registered(con, {"_gold": _table(rows, _CASE_TYPES)}), transaction(con):
        con.execute(sql("references", "drop_gold"))
        con.execute(sql("references", "insert_gold"))
        if not is_lake(con):  # a lake keeps no facts
            facts.refresh_cases(con)


@operation
def upsert_kb(con: Con, rows: list[dict[str, Any]]) -> list[str]:
    """Store documents (``evaluators.gold.kb_row`` dicts) in one transaction: record in
    ``kb_changes`` what the load changes, replace the stored documents of these ids, and give the
    stored textless documents of settled traces the text they now have (``refill_textless``), which
    marks those traces waiting to be assembled again (the context derived from their prompt may now
    find the documents) and then evaluated. Returns the traces refilled. (On a lake,
    ``step_documents`` is a view over appended tables: the text is a ``document_texts`` row it
    shows, and the traces are marked by appended state rows.)"""
    if not rows:
        return []
    tables = {"_kb": _table(rows, _KB_TYPES)}
    with registered(con, tables), transaction(con):
        con.execute(sql("references", "kb_changes"))  # before the rows are replaced: what this load changes
        con.execute(sql("references", "drop_kb"))
        con.execute(sql("references", "insert_kb"))
        if is_lake(con):  # appends instead of updates (lake.work.refill_textless)
            return lake_work.refill_textless(con, max(r["loaded_at"] for r in rows))
        refilled = sorted({r[0] for r in con.execute(sql("references", "refill_textless")).fetchall()})
        if refilled:  # their context and verdicts were made without the text
            con.execute(sql("references", "reassemble"), {"t": refilled})
            facts.refresh_traces(con, refilled)  # their documents' text is a fact of trace_coverage
    return refilled


@operation
def traces_for_cases(con: Con, case_ids: list[str]) -> list[str]:
    """Settled traces joined to these cases (by case id, or by normalized query text)."""
    if not case_ids:
        return []
    with registered(con, {"_cases": pa.table({"case_id": pa.array(case_ids, pa.string())})}):
        rows = con.execute(sql("references", "traces_for_cases")).fetchall()
    return [r[0] for r in rows]


def changes_since(run: QueryFn, since: str | None) -> list[dict[str, Any]]:
    """The knowledge-base changes recorded at or after ``since`` (ISO text; None: all), newest first,
    as dicts of ``sql/references/changes_since``'s columns; read through the query interface."""
    res = run(sql("references", "changes_since"), {"since": since})
    return [dict(zip(res["columns"], r, strict=True)) for r in res["rows"]]
