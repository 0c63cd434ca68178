"""The triage screen's registry search (``GET /api/v1/ui/registry``) without a second index kept for
good in the server.

Live attribution searches the knowledge-base registry with a BM25 index
(``evaluators.builtin._registry_index``) that lives as long as the registry it indexes. At 100,000
registry documents that index takes about 140 MB and 2.4 s of CPU to build (docs/limits.md). The
server's own evaluator (the one that evaluates a trickle of traces in the server process, and whose
index ``GET /api/v1/triage`` searches) holds one already; a search of the UI uses that same index
whenever the evaluator's registry is the one stored now. Only when it is not (the server evaluates
nothing, or the knowledge base was loaded again and the evaluator has not read it yet) does the UI
build an index of its own, over the registry the trace views read, and it drops that index after
``IDLE_SECONDS`` without a search, measured on an injectable clock: a reviewer's session pays the
build once, an idle server does not keep the memory.
"""

from __future__ import annotations

import threading
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from collector.components import Context
from collector.store.reader import jsonable
from ragfault_core.clock import Clock, SystemClock

if TYPE_CHECKING:
    from evaluators.builtin._registry_index import RegistryIndex
    from evaluators.eval_input import KnowledgeBase
    from ragfault.ui import _SharedReferences

IDLE_SECONDS = 600.0
"""How long the UI's own index outlives its last search."""
MAX_HITS = 50
TEXT_CAP = 6000


class RegistrySearch:
    """Which index a search of the UI reads: the evaluator's when it is current, else the UI's own,
    built on first use and released ``idle_seconds`` after the last search (a thread waits on
    ``clock`` for that, and ends with the release) or as soon as the evaluator's is current again."""

    def __init__(self, clock: Clock | None = None, idle_seconds: float = IDLE_SECONDS) -> None:
        self.clock: Clock = clock or SystemClock()
        self.idle_seconds = idle_seconds
        self.builds = 0  # indexes of its own built so far
        self._lock = threading.Lock()
        self._own: tuple[KnowledgeBase, RegistryIndex] | None = None
        self._used = 0.0
        self._releaser: threading.Thread | None = None
        self._never = threading.Event()  # the releaser waits on time alone

    @property
    def held(self) -> KnowledgeBase | None:
        """The registry whose index of its own is held now (None when none is)."""
        with self._lock:
            return self._own[0] if self._own is not None else None

    def index(
        self, kb: KnowledgeBase, evaluators: KnowledgeBase | None
    ) -> tuple[KnowledgeBase, RegistryIndex]:
        """The registry to search and its index: ``evaluators`` (the evaluator's registry, given
        only when it is the current one) with the index it already has, else ``kb`` with one of
        this search's own."""
        from evaluators.builtin._registry_index import build_index, registry_index

        if evaluators is not None:
            with self._lock:
                self._own = None  # the evaluator caught up: an index of its own is no longer needed
            return evaluators, registry_index(evaluators)
        with self._lock:  # one build at a time: a second search waits for the first one's index
            self._used = self.clock.monotonic()
            if self._own is None or self._own[0] is not kb:
                self._own = (kb, build_index(kb))
                self.builds += 1
            if self._releaser is None:
                self._releaser = threading.Thread(
                    target=self._release, name="ragfault-ui-registry", daemon=True
                )
                self._releaser.start()
            return self._own

    def _release(self) -> None:
        while True:
            with self._lock:
                left = self._used + self.idle_seconds - self.clock.monotonic()
                if left <= 0:
                    self._own = None
                    self._releaser = None
                    return
            self.clock.wait(self._never, left)


def evaluators_registry(ctx: Context, stamp: tuple[Any, ...] | None) -> KnowledgeBase | None:
    """The registry of the server's evaluator when it read the one stored now (``stamp``: the
    documents' count and latest load), else None."""
    from evaluators.service.scheduler import EvaluationService

    svc = ctx.find(EvaluationService)
    if svc is None or stamp is None:
        return None
    refs = svc.runner.refs
    read = refs.stamp  # before its registry: References sets the registry first, the stamp after
    kb = refs.kb
    return kb if read is not None and tuple(read[2:]) == stamp else None


def _cap(text: str | None) -> str | None:
    if text is None or len(text) <= TEXT_CAP:
        return text
    return text[:TEXT_CAP] + f"… [{len(text) - TEXT_CAP} more characters]"


def registry_search(
    ctx: Context, shared: _SharedReferences, search: RegistrySearch, text: str, k: int
) -> list[dict[str, Any]]:
    """The registry's best documents for ``text``, from the index live attribution searches, with
    what a reviewer needs to pick a quote (the text) and to judge it (current or not)."""
    from evaluators.builtin._registry_index import is_current, terms_of

    con = ctx.store.cursor()
    try:
        current = shared.kb_of(con)
        stamp = shared.stamp
    finally:
        con.close()
    kb, index = search.index(current, evaluators_registry(ctx, stamp))
    out = []
    now = datetime.now(UTC)
    for doc_id, score in index.search(terms_of(text), k):
        doc = kb.get(doc_id)
        if doc is None:
            continue
        out.append(
            {
                "doc_id": doc_id,
                "score": round(score, 4),
                "title": doc.title,
                "content": _cap(doc.content),
                "superseded_by": doc.superseded_by,
                "current": is_current(kb, doc, now),
            }  # fmt: skip
        )
    return jsonable(out)  # type: ignore[no-any-return]
