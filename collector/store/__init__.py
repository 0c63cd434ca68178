"""The store seam: schema, the single writer and sandboxed readers (DESIGN §1).

Everything above this package talks to ``Store``; a second backend (e.g. DuckLake) implements the
same small surface.
"""

from collector.store.duck import Store

__all__ = ["Store"]
