"""The DuckLake backend: a lake (a PostgreSQL catalog and Parquet files) that several collectors write
at once. ``store.LakeStore`` is the store; the other modules are its parts (attaching, tables,
ingest, claims and holders in the catalog, settling's and evaluation's paths), and ``sql/`` holds
its own statements (areas ``lake/<area>`` of ``collector.store.sqlfiles``).

Outside ``collector/store/`` only ``store.LakeStore`` is opened (by the server, the CLI and the
tests) and ``claims`` read (who works on a trace now); the shared operations of ``collector/store/``
dispatch to ``work`` when their handle is a lake's.
"""
