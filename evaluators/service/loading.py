"""Storing gold cases and knowledge-base documents (validated first; all or nothing)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from collector.store import references
from collector.store.base import Tx
from evaluators.gold import GoldCase, KBDocument, case_row, kb_row, parse_jsonl
from evaluators.service.runner import utcnow

WriteFn = Callable[[Callable[[Tx], Any]], Any]


def store_gold(write: WriteFn, text: str | bytes, dataset: str | None = None) -> list[str]:
    """Validate and upsert gold cases; returns their ids. A reloaded case replaces the old one."""
    cases = parse_jsonl(text, GoldCase, "case_id")
    if not cases:
        return []
    now = utcnow()
    rows = [case_row(c, dataset, now) for c in cases]
    write(lambda con: references.upsert_gold(con, rows))
    return [c.case_id for c in cases]


def store_kb(write: WriteFn, text: str | bytes) -> list[str]:
    """Validate and upsert knowledge-base documents; returns their ids. A reload that changes a
    document's content, version or validity (or adds a document to a registry that had some) is
    recorded in ``kb_changes`` (``queries/kb_affected.sql`` lists the cases it affects)."""
    return load_kb(write, text)[0]


def load_kb(write: WriteFn, text: str | bytes) -> tuple[list[str], list[str]]:
    """``store_kb``, and the settled traces whose textless documents (sent as ``{id, score}``)
    took their text from the documents just loaded: their verdicts need evaluating again."""
    docs = parse_jsonl(text, KBDocument, "doc_id")
    if not docs:
        return [], []
    now = utcnow()
    rows = [kb_row(d, now) for d in docs]
    refilled: list[str] = write(lambda con: references.upsert_kb(con, rows))
    return [d.doc_id for d in docs], refilled


def traces_for_cases(con: Tx, case_ids: list[str]) -> list[str]:
    """Settled traces joined to these cases (by case id, or by normalized query text)."""
    return references.traces_for_cases(con, case_ids)
