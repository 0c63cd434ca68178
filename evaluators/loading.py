"""Storing gold cases and knowledge-base documents (validated first; all or nothing)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import duckdb
import pyarrow as pa

from evaluators.gold import GoldCase, KBDocument, case_row, kb_row, parse_jsonl
from evaluators.runner import utcnow

WriteFn = Callable[[Callable[[duckdb.DuckDBPyConnection], Any]], Any]

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


def store_gold(write: WriteFn, text: str | bytes, dataset: str | None = None) -> list[str]:
    """Validate and upsert gold cases; returns their ids. A reloaded case replaces the old one."""
    cases = parse_jsonl(text, GoldCase, "case_id")
    if not cases:
        return []
    now = utcnow()
    tbl = _table([case_row(c, dataset, now) for c in cases], _CASE_TYPES)
    cols = ", ".join(tbl.column_names)

    def job(con: duckdb.DuckDBPyConnection) -> None:
        con.register("_gold", tbl)
        try:
            con.execute(f"INSERT OR REPLACE INTO gold_cases ({cols}) SELECT {cols} FROM _gold")
        finally:
            con.unregister("_gold")

    write(job)
    return [c.case_id for c in cases]


# A reload that changes a registry document's content, version or validity (or adds a document to a
# registry that had some) is recorded in kb_changes, so the cases it affects can be listed for re-running
# (queries/kb_affected.sql).
_KB_CHANGES = """
INSERT INTO kb_changes (doc_id, change, old_version, new_version, changed_at)
SELECT n.doc_id,
       concat_ws(',',
           CASE WHEN o.doc_id IS NULL THEN 'added' END,
           CASE WHEN o.doc_id IS NOT NULL AND o.content IS DISTINCT FROM n.content THEN 'content' END,
           CASE WHEN o.doc_id IS NOT NULL AND o.version IS DISTINCT FROM n.version THEN 'version' END,
           CASE WHEN o.doc_id IS NOT NULL AND (o.valid_from IS DISTINCT FROM n.valid_from
                OR o.valid_to IS DISTINCT FROM n.valid_to OR o.superseded_by IS DISTINCT FROM n.superseded_by)
                THEN 'validity' END),
       o.version, n.version, n.loaded_at
FROM _kb n LEFT JOIN kb_documents o ON o.doc_id = n.doc_id
WHERE (o.doc_id IS NULL AND EXISTS (SELECT 1 FROM kb_documents))
   OR (o.doc_id IS NOT NULL AND (o.content IS DISTINCT FROM n.content OR o.version IS DISTINCT FROM n.version
       OR o.valid_from IS DISTINCT FROM n.valid_from OR o.valid_to IS DISTINCT FROM n.valid_to
       OR o.superseded_by IS DISTINCT FROM n.superseded_by))
"""


def store_kb(write: WriteFn, text: str | bytes) -> list[str]:
    docs = parse_jsonl(text, KBDocument, "doc_id")
    if not docs:
        return []
    now = utcnow()
    tbl = _table([kb_row(d, now) for d in docs], _KB_TYPES)
    cols = ", ".join(tbl.column_names)

    def job(con: duckdb.DuckDBPyConnection) -> None:
        con.register("_kb", tbl)
        try:
            con.execute(_KB_CHANGES)  # before the rows are replaced: what this load changes
            con.execute(f"INSERT OR REPLACE INTO kb_documents ({cols}) SELECT {cols} FROM _kb")
        finally:
            con.unregister("_kb")

    write(job)
    return [d.doc_id for d in docs]


def traces_for_cases(con: duckdb.DuckDBPyConnection, case_ids: list[str]) -> list[str]:
    """Settled traces joined to these cases (by case id, or by normalized query text)."""
    if not case_ids:
        return []
    con.register("_cases", pa.table({"case_id": pa.array(case_ids, pa.string())}))
    try:
        rows = con.execute(
            "SELECT DISTINCT t.trace_id FROM traces t WHERE t.settled_at IS NOT NULL AND ("
            " t.case_id IN (SELECT case_id FROM _cases)"
            " OR (t.case_id IS NULL AND t.query_norm IS NOT NULL AND EXISTS ("
            "   SELECT 1 FROM gold_cases g WHERE g.case_id IN (SELECT case_id FROM _cases)"
            "   AND g.query_norm = t.query_norm)))"
        ).fetchall()
    finally:
        con.unregister("_cases")
    return [r[0] for r in rows]
