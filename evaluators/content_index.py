"""Finding the registry text that contains a given text, or is contained in it, without reading them all.

``KnowledgeBase.identify`` names a document that came without an id by its content: the first
registry document (in registry order) whose normalized text contains the document's normalized text,
or is contained in it (registry texts of at least ``MIN_CONTAINED`` characters). Comparing with every
registry text costs about half a microsecond a text: 55 ms for each new text with 100,000 registry
documents. ``ContentIndex.first`` gives the same answer from two indexes:

- *contained in the text*: every registry text by its first ``GRAM`` characters; each position of
  the text is looked up there;
- *containing the text*: the ``GRAM``-character pieces of every registry text that start at multiples
  of ``STEP``, kept as packed (hash, document) integers in one sorted array (8 bytes a piece). A
  registry text that contains the text has one of these pieces at each of the text's possible offsets
  modulo ``STEP``, so trying the text's first ``STEP`` offsets finds every such registry text. For
  each offset the rarest of its first pieces gives the candidates, in registry order; the first that
  really contains the text is the answer. A text too short for that (under ``STEP + GRAM - 1``
  characters) is compared with every registry text, as before.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left

GRAM = 8  # characters in an indexed piece (and the shortest registry text found inside a text)
MIN_CONTAINED = GRAM
STEP = 12  # pieces of a registry text start every STEP characters
PROBES = 4  # pieces compared per offset to pick the rarest
_DOC_BITS = 24  # documents per index: 16.7 million
_DOC_MASK = (1 << _DOC_BITS) - 1
_HASH_MASK = (1 << (63 - _DOC_BITS)) - 1  # packed values stay within a signed 64-bit integer


def _sorted(values: array[int]) -> array[int]:
    """The values in ascending order, sorted by Arrow (a Python list of them would take about five
    times the memory of the array)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if not values:
        return values
    column = pa.Array.from_buffers(pa.int64(), len(values), [None, pa.py_buffer(values)])
    ordered = pc.take(column, pc.array_sort_indices(column))
    out = array("q")
    out.frombytes(ordered.buffers()[1].to_pybytes()[: 8 * len(values)])
    return out


def first_by_scan(texts: list[str], norm: str, limit: int | None = None) -> int | None:
    """The reference rule, registry text by registry text (``limit``: look only before it)."""
    for i, t in enumerate(texts if limit is None else texts[:limit]):
        if norm in t or (len(t) >= MIN_CONTAINED and t in norm):
            return i
    return None


class ContentIndex:
    """Indexes over the normalized registry texts, for ``first``."""

    def __init__(self, texts: list[str]) -> None:
        self.texts = texts
        self._prefixes: dict[str, list[int]] = {}
        indexable = len(texts) <= _DOC_MASK
        packed = array("q")
        for i, t in enumerate(texts):
            if len(t) >= MIN_CONTAINED:
                self._prefixes.setdefault(t[:GRAM], []).append(i)
            if indexable:
                packed.extend(
                    ((hash(t[p : p + GRAM]) & _HASH_MASK) << _DOC_BITS) | i
                    for p in range(0, len(t) - GRAM + 1, STEP)
                )
        self._pieces = _sorted(packed) if indexable else None

    def first(self, norm: str) -> int | None:
        """The index of the first text containing ``norm`` or contained in it (see the module doc)."""
        best: int | None = None
        texts = self.texts
        m = len(norm)
        # registry texts inside norm: each starts at some position with its first GRAM characters
        prefixes = self._prefixes
        for p in range(m - GRAM + 1):
            for i in prefixes.get(norm[p : p + GRAM], ()):
                if best is not None and i >= best:
                    break
                if norm.startswith(texts[i], p):
                    best = i
                    break
        pieces = self._pieces
        if pieces is None or m < STEP + GRAM - 1:
            found = first_by_scan(texts, norm, best)
            return found if found is not None else best
        # registry texts containing norm: one of their pieces sits at each offset j of norm, j < STEP
        n_pieces = len(pieces)
        for j in range(STEP):
            narrowest: tuple[int, int] | None = None
            for p in range(j, min(m - GRAM, j + PROBES * STEP - 1) + 1, STEP):
                key = (hash(norm[p : p + GRAM]) & _HASH_MASK) << _DOC_BITS
                lo = bisect_left(pieces, key)
                hi = bisect_left(pieces, key + _DOC_MASK + 1, lo)
                if narrowest is None or hi - lo < narrowest[1] - narrowest[0]:
                    narrowest = (lo, hi)
                if lo == hi:
                    break  # no registry text holds this piece here: none contains norm at offset j
            assert narrowest is not None  # m >= STEP + GRAM - 1: every offset has a piece
            for k in range(narrowest[0], min(narrowest[1], n_pieces)):
                i = pieces[k] & _DOC_MASK
                if best is not None and i >= best:
                    break
                if norm in texts[i]:
                    best = i
                    break
        return best
