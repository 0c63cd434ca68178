"""The comparison form of text, as evaluators import it: ``ragfault_core.textnorm`` (see there).

``normalize`` is exact and fast for ASCII and Chinese text, ``normalize_doc`` caches it for document
contents (the same chunks come back trace after trace), ``normalize_cached`` for short strings that
repeat (quotes, ids); ``reference_normalize`` is the definition.
"""

from __future__ import annotations

from ragfault_core.textnorm import normalize, normalize_cached, normalize_doc, reference_normalize

__all__ = ["normalize", "normalize_doc", "normalize_cached", "reference_normalize"]
