"""Running evaluators over stored traces: load views, run pure evaluators, write verdicts.

The pieces, each in its own module (this one keeps the names importable from here):

- ``evaluators.service.references``: gold cases and the knowledge base, reloaded when their tables change;
- ``evaluators.service.views``: a batch's stored rows built into views and inputs;
- ``evaluators.service.running``: ``Runner`` (pure: inputs in, metric rows out) and the rows to write;
- ``evaluators.service.store_runner``: ``StoreRunner``, which fetches, evaluates (in-process or in worker
  processes) and writes a batch's verdicts through the store (``collector.store.verdicts``).
"""

from __future__ import annotations

from collector.store.verdicts import EVAL_COLUMNS, TraceTables, verdicts_since_sql
from evaluators.service.references import References
from evaluators.service.running import (
    EVAL_SCHEMA,
    LOG_SCHEMA,
    EvalTables,
    Runner,
    build_tables,
    evaluate_tables,
    gc_paused,
    utcnow,
)
from evaluators.service.store_runner import StoreRunner, WriteFn, write_job
from evaluators.service.views import (
    fetch_tables,
    fetch_with_window,
    load_views,
    make_inputs,
    views_from_tables,
)

__all__ = [
    "EVAL_COLUMNS",
    "EVAL_SCHEMA",
    "LOG_SCHEMA",
    "EvalTables",
    "References",
    "Runner",
    "StoreRunner",
    "TraceTables",
    "WriteFn",
    "build_tables",
    "evaluate_tables",
    "fetch_tables",
    "fetch_with_window",
    "gc_paused",
    "load_views",
    "make_inputs",
    "utcnow",
    "verdicts_since_sql",
    "views_from_tables",
    "write_job",
]
