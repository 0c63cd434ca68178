"""The Arrow tables a writing connection reads a batch from (``_in_spans``, ``_in_steps``, ``_in_docs``,
``_in_traces``), the same for both backends: a batch is appended by statements that select from these
views, so it is never copied row by row into the database.
"""

from __future__ import annotations

import duckdb
import pyarrow as pa

from collector.ingest.batch import ArrowBatch
from collector.store.schema import DOC_SCHEMA, SPAN_SCHEMA, STEP_SCHEMA, TRACE_SCHEMA

CONFLICT_RETRIES = 6  # a batch that keeps conflicting with concurrent writers fails retryably (503)


class ArrowSource:
    """A registered Arrow source whose table is swapped between commits: DuckDB reads whatever
    table it holds when a statement runs, so the view is registered once per connection."""

    def __init__(self, schema: pa.Schema) -> None:
        self.schema = schema
        self.empty: pa.Table = schema.empty_table()
        self.table = self.empty

    def __arrow_c_schema__(self) -> object:
        return self.schema.__arrow_c_schema__()

    def __arrow_c_stream__(self, requested_schema: object | None = None) -> object:
        return self.table.__arrow_c_stream__(requested_schema)


class Inputs:
    """The ``_in_spans``, ``_in_steps``, ``_in_docs`` and ``_in_traces`` views of one writing
    connection."""

    def __init__(self) -> None:
        self.spans, self.steps, self.docs = (
            ArrowSource(SPAN_SCHEMA),
            ArrowSource(STEP_SCHEMA),
            ArrowSource(DOC_SCHEMA),
        )
        self.traces = ArrowSource(TRACE_SCHEMA)

    def register(self, con: duckdb.DuckDBPyConnection) -> None:
        con.register("_in_spans", self.spans)
        con.register("_in_steps", self.steps)
        con.register("_in_docs", self.docs)
        con.register("_in_traces", self.traces)

    def set(self, batch: ArrowBatch) -> None:
        self.spans.table, self.steps.table, self.docs.table = batch.spans, batch.steps, batch.docs
        self.traces.table = batch.trace_table()

    def clear(self) -> None:
        """Release the batch (the views stay registered, reading nothing)."""
        for t in (self.spans, self.steps, self.docs, self.traces):
            t.table = t.empty
