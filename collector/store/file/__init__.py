"""The single-file backend: one DuckDB file that one collector process writes. ``store.Store`` is the
store (``collector.store.Store``); its parts are opening the file (``connect``: attach, sandbox,
memory bounds), ingest writes (``ingest``, its statements in ``sql/ingest/``: area ``file/ingest``)
and when the writer checkpoints (``checkpoint``).

The operations both backends share (settling, verdicts, reads) stay in ``collector/store/`` and their
statements in its ``sql/``; they take a file's handle like a lake's.
"""
