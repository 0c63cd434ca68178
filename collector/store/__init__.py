"""The store seam: schema, the single writer and sandboxed readers (docs/architecture.md, The store seam).

Everything above this package talks to ``Store``; the backends are packages of their own
(``file/``: one DuckDB file, ``Store``; ``lake/``: DuckLake, ``lake.store.LakeStore``), each with its
own statements, beside the operations both share.
"""

from collector.store.file.store import Store

__all__ = ["Store"]
