"""Gold cases and the knowledge base as the evaluators hold them (``References``), reloaded from the
store when they change (``collector.store.references``)."""

from __future__ import annotations

import logging
from typing import Any

from pydantic import ValidationError

from collector.store import references
from collector.store.base import Tx
from evaluators.eval_input import KnowledgeBase
from evaluators.gold import GoldCase, KBDocument
from evaluators.text import normalize
from evaluators.trace_view import TraceView
from ragfault_core.jsonvalue import loads as loads_json

log = logging.getLogger("ragfault.evaluate")


def _loads(value: Any) -> Any:
    if value is None or isinstance(value, (dict, list)):
        return value
    try:
        return loads_json(value)
    except ValueError:
        return None


def kb_documents(con: Tx) -> list[KBDocument]:
    """Every stored knowledge-base document."""
    return [
        KBDocument(
            doc_id=r[0],
            version=r[1],
            valid_from=r[2],
            valid_to=r[3],
            superseded_by=r[4],
            acl=r[5],
            title=r[6],
            content=r[7],
            metadata=_loads(r[8]),
        )  # fmt: skip
        for r in references.kb_rows(con)
    ]


def gold_entries(rows: list[tuple[str, str, str, str]]) -> list[tuple[str, str, str]]:
    """Stored gold-case rows (``references.gold_rows``) as ``References`` holds them: (case id,
    normalized query, stored JSON). store_gold fills query_norm; a row written some other way may
    lack it: normalized here."""
    return [(cid, qn or normalize(q), raw) for cid, qn, q, raw in rows]


class References:
    """Gold cases and the knowledge base, reloaded when their tables change.

    A case is validated (``GoldCase``) the first time a trace joins it, not when the table is read:
    a gold set of 10,000 cases took 0.4 s to validate and 0.35 s to pickle for each version, and
    every worker process 0.45 s to unpickle, before the first trace was evaluated. The cases travel
    (``get_state``) as the JSON they are stored as, with the normalized query each is joined by.
    They were validated by the same model when loaded; one that no longer is (a stored row edited
    by hand) is logged once and joins no trace.
    """

    def __init__(self) -> None:
        self.stamp: tuple[Any, ...] | None = None
        self._stored: dict[str, tuple[str, str]] = {}  # case id -> (normalized query, stored JSON), as read
        self._by_query: dict[str, str] = {}  # normalized query -> case id (the first row with it)
        self._cases: dict[str, GoldCase | None] = {}  # validated so far (None: invalid)
        self.kb = KnowledgeBase()

    def refresh(self, con: Tx) -> None:
        stamp = references.stamp(con)
        if stamp == self.stamp:
            return
        docs = kb_documents(con)
        self._set(gold_entries(references.gold_rows(con)), docs, stamp)

    def _set(
        self, cases: list[tuple[str, str, str]], docs: list[KBDocument], stamp: tuple[Any, ...] | None
    ) -> None:
        self._stored = {case_id: (query_norm, raw) for case_id, query_norm, raw in cases}
        self._by_query = {}
        self._cases = {}
        for case_id, query_norm, _ in cases:
            self._by_query.setdefault(query_norm, case_id)
        self.kb = KnowledgeBase(docs)
        self.stamp = stamp

    def get_state(self) -> tuple[Any, ...]:
        """Plain data to rebuild these references elsewhere (a worker process): ``set_state``."""
        cases = [(case_id, query_norm, raw) for case_id, (query_norm, raw) in self._stored.items()]
        return self.stamp, cases, list(self.kb.by_id.values())

    def set_state(self, state: tuple[Any, ...]) -> None:
        stamp, cases, docs = state
        self._set(cases, docs, stamp)

    @property
    def case_count(self) -> int:
        return len(self._stored)

    def case(self, case_id: str) -> GoldCase | None:
        """The gold case of this id, validated on first use (None when unknown or invalid)."""
        try:
            return self._cases[case_id]
        except KeyError:
            pass
        stored = self._stored.get(case_id)
        found: GoldCase | None = None
        if stored is not None:
            try:
                found = GoldCase.model_validate(_loads(stored[1]))
            except ValidationError as exc:
                log.warning("gold case %s as stored is not valid; no trace joins it: %s", case_id, exc)
            self._cases[case_id] = found  # only ids that exist are remembered
        return found

    def case_for(self, trace: TraceView) -> GoldCase | None:
        if trace.case_id:
            return self.case(trace.case_id)
        if trace.query_text:
            case_id = self._by_query.get(normalize(trace.query_text))
            return self.case(case_id) if case_id is not None else None
        return None
