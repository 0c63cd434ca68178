"""Evidence matching (docs/architecture.md, Evidence and matching): which step documents hold which gold evidence units.

A step document matches an evidence item when, in order:
1. its chunk id equals the evidence chunk id; or
2. its document id — the id given, the source id from metadata, or the registry document identified
   by its content — equals the evidence doc id, and the quote (if any) is inside its content; or
3. the quote is inside its content.
An ``any_of`` group is one unit, matched when any of its items is. A unit is in context when a
context document matches it, or — when the context was derived from the prompt — when one of its
quotes appears in the input of the LLM call that produced the answer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from evaluators.cached import cached_property
from evaluators.gold import AnyOf, Evidence, KBDocument
from evaluators.text import normalize_cached, normalize_doc

if TYPE_CHECKING:
    from evaluators.eval_input import EvalInput
    from evaluators.trace_view import StepDoc


@dataclass(frozen=True)
class Unit:
    index: int
    items: tuple[Evidence, ...]

    @property
    def grade(self) -> int:
        return max(e.grade for e in self.items)

    @property
    def label(self) -> str:
        """A readable name: doc ids, or the start of the quote."""
        names = []
        for e in self.items:
            if e.doc_id:
                names.append(e.doc_id)
            elif e.chunk_id:
                names.append(e.chunk_id)
            elif e.quote:
                names.append(f'"{e.quote[:40]}"')
        return " | ".join(dict.fromkeys(names))

    def describe(self) -> dict[str, object]:
        return {"unit": self.index, "label": self.label, "quotes": [e.quote for e in self.items if e.quote]}


def units_of(evidence: list[Evidence | AnyOf]) -> list[Unit]:
    out = []
    for i, item in enumerate(evidence):
        items = tuple(item.any_of) if isinstance(item, AnyOf) else (item,)
        out.append(Unit(i, items))
    return out


class Matching:
    """Per-trace matching state, computed once and shared by every evaluator of the trace."""

    def __init__(self, inp: EvalInput) -> None:
        # the trace, not the EvalInput: an EvalInput caches its Matching, and a reference back would
        # make a cycle that only the garbage collector frees (every trace of a batch would pile up)
        self.trace = inp.trace
        self.kb = inp.kb
        self.units: list[Unit] = units_of(inp.case.evidence) if inp.case is not None else []
        self._doc_units: dict[int, frozenset[int]] = {}
        # every evidence item, flattened: (unit index, chunk id, doc id, normalized quote)
        self._items: list[tuple[int, str | None, str | None, str]] = [
            (u.index, e.chunk_id, e.doc_id, normalize_cached(e.quote) if e.quote else "")
            for u in self.units
            for e in u.items
        ]
        # a document's units depend only on its ids and content: repeats across stages share them
        self._units_by_value: dict[tuple[str | None, str | None, str | None], frozenset[int]] = {}
        self._registry: dict[int, tuple[str | None, KBDocument | None]] = {}  # by id(doc): _look_up's

    # --- documents -> registry --------------------------------------------------------------

    def kb_id(self, doc: StepDoc) -> str | None:
        """The registry id of a step document: its id or source id if registered, else by content."""
        entry = self._registry.get(id(doc))
        return (entry or self._look_up(doc))[0]

    def kb_doc(self, doc: StepDoc) -> KBDocument | None:
        """The registry row of a step document (``kb_id``), None when it has none."""
        entry = self._registry.get(id(doc))
        return (entry or self._look_up(doc))[1]

    def _look_up(self, doc: StepDoc) -> tuple[str | None, KBDocument | None]:
        """A document's registry id and row, worked out once (a document is asked for by several
        evaluators, most often for its row)."""
        found = None
        by_id = self.kb.by_id
        for cand in (doc.doc_id, doc.chunk_id):
            if cand and cand in by_id:
                found = cand
                break
        if found is None:
            found = self.kb.identify(doc.content)
        entry = self._registry[id(doc)] = (found, by_id.get(found) if found else None)
        return entry

    def ids_of(self, doc: StepDoc) -> set[str]:
        return {i for i in (doc.doc_id, doc.chunk_id, self.kb_id(doc)) if i}

    def content_norm(self, doc: StepDoc) -> str:
        if doc.content:
            return normalize_doc(doc.content)
        kb = self.kb_doc(doc)
        return normalize_doc(kb.content) if kb is not None and kb.content else ""

    # --- documents -> evidence ----------------------------------------------------------------

    def item_matches(self, doc: StepDoc, ev: Evidence, content: str) -> bool:
        if ev.chunk_id and doc.chunk_id == ev.chunk_id:
            return True
        quote = normalize_cached(ev.quote) if ev.quote else ""
        if ev.doc_id and ev.doc_id in self.ids_of(doc):
            # without any text to check, the id alone decides
            if not quote or not content or quote in content:
                return True
        return bool(quote) and bool(content) and quote in content

    def units_of_doc(self, doc: StepDoc) -> frozenset[int]:
        key = id(doc)
        found = self._doc_units.get(key)
        if found is not None:
            return found
        value = (doc.doc_id, doc.chunk_id, doc.content)
        found = self._units_by_value.get(value)
        if found is None:
            found = self._match(doc) if self._items else frozenset()
            self._units_by_value[value] = found
        self._doc_units[key] = found
        return found

    def _match(self, doc: StepDoc) -> frozenset[int]:
        """The units ``item_matches`` finds for this document, item by item. When the item has a
        quote and the document has content, the quote decides whatever the ids are (rule 2 then
        needs the quote inside too, which rule 3 already accepts), so the ids are looked up only
        for items without a quote or documents without content."""
        content = self.content_norm(doc)
        ids: set[str] | None = None
        out: set[int] = set()
        for unit, chunk_id, doc_id, quote in self._items:
            if unit in out:
                continue
            if chunk_id and doc.chunk_id == chunk_id:
                out.add(unit)
            elif quote and content:
                if quote in content:
                    out.add(unit)
            elif doc_id:
                if ids is None:
                    ids = self.ids_of(doc)
                if doc_id in ids:
                    out.add(unit)
        return frozenset(out)

    def units_in(self, docs: list[StepDoc]) -> set[int]:
        out: set[int] = set()
        for d in docs:
            out |= self.units_of_doc(d)
        return out

    # --- stages -----------------------------------------------------------------------------

    @cached_property
    def in_candidates(self) -> set[int]:
        return self.units_in(self.trace.candidates)

    @cached_property
    def quotes_in_prompt(self) -> set[int]:
        prompt = self.trace.prompt_norm
        if not prompt or self.trace.has_explicit_context:
            return set()
        return {
            u.index
            for u in self.units
            if any(
                e.quote and normalize_cached(e.quote) and normalize_cached(e.quote) in prompt for e in u.items
            )
        }

    @cached_property
    def in_context(self) -> set[int]:
        return self.units_in(self.trace.context_docs) | self.quotes_in_prompt

    @cached_property
    def has_context_stage(self) -> bool:
        """Whether the trace shows what the model saw (explicit context or an LLM input)."""
        return self.trace.has_explicit_context or bool(self.trace.prompt_norm)

    def unit(self, index: int) -> Unit:
        return self.units[index]
