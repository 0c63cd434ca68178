"""Everything an evaluator may read (``EvalInput``): the trace, its gold case, the knowledge-base
registry (``KnowledgeBase``, indexed for look-ups by id and by content), the time and the judge."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from evaluators.cached import cached_property
from evaluators.content_index import ContentIndex
from evaluators.gold import GoldCase, KBDocument
from evaluators.text import normalize, normalize_doc
from evaluators.trace_view import TraceView

if TYPE_CHECKING:
    from evaluators.matching import Matching


class KnowledgeBase:
    """The registry, indexed for id and content look-ups."""

    def __init__(self, docs: list[KBDocument] | None = None) -> None:
        self.by_id: dict[str, KBDocument] = {d.doc_id: d for d in docs or []}
        self._norm: list[tuple[str, str]] = [
            (d.doc_id, normalize(d.content)) for d in docs or [] if d.content
        ]
        self._index: ContentIndex | None = None  # built on the first look-up by content
        self._by_content: dict[str, str | None] = {}
        # results evaluators derive from registry rows alone, shared by every trace (bounded)
        self._memo: dict[Any, Any] = {}

    def __len__(self) -> int:
        return len(self.by_id)

    def memo(self) -> dict[Any, Any]:
        """A cache for results that depend only on registry rows (and the key); emptied when large.
        Cached values are shared: callers must not modify them."""
        if len(self._memo) > 100_000:
            self._memo.clear()
        return self._memo

    def get(self, doc_id: str | None) -> KBDocument | None:
        return self.by_id.get(doc_id) if doc_id else None

    def identify(self, content: str | None) -> str | None:
        """The first registry document whose content contains this text, or is contained in it (at
        least 8 characters), once normalized (``evaluators.content_index``)."""
        if not content or not self._norm:
            return None
        norm = normalize_doc(content)
        if not norm:
            return None
        if norm in self._by_content:
            return self._by_content[norm]
        if self._index is None:
            self._index = ContentIndex([t for _, t in self._norm])
        first = self._index.first(norm)  # the first registry text containing norm or inside it
        found = self._norm[first][0] if first is not None else None
        if len(self._by_content) > 100_000:
            self._by_content.clear()
        self._by_content[norm] = found
        return found


@dataclass
class EvalInput:
    """Everything an evaluator may read: the trace, its case (if joined), the registry, the time."""

    trace: TraceView
    case: GoldCase | None
    kb: KnowledgeBase
    as_of: datetime | None = None
    source_keys: tuple[str, ...] = ()
    _cache: dict[Any, Any] = field(default_factory=dict)
    # The judge-tier oracle (``evaluators.judge.Judge``), set by the judge runner; None in the cheap tier.
    # Evaluators stay pure in the sense that matters: everything they read arrives here.
    judge: Any = None

    @cached_property
    def matching(self) -> Matching:
        from evaluators.matching import Matching

        return Matching(self)

    @cached_property
    def user_scope(self) -> tuple[str, ...] | None:
        """The caller's scopes: from the trace, else from the gold case; None when neither names any."""
        if self.trace.user_scope:
            return self.trace.user_scope
        if self.case is not None and self.case.user_scope:
            return tuple(self.case.user_scope)
        return None
