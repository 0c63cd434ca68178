"""The store seam: schema, the single writer and sandboxed readers (docs/architecture.md, The store seam).

Everything above this package talks to ``Store``; a second backend (e.g. DuckLake) implements the
same small surface.
"""

from collector.store.duck import Store

__all__ = ["Store"]
