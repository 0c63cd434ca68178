"""ragfault collector: OTLP receivers, the span store and the step normalizer.

The pipeline, in the order data flows::

    receivers (otlp_http, otlp_grpc)  ->  otlp.decode (bytes -> SpanBatch)
        -> store.writer (one thread owns DuckDB writes)  ->  normalize (spans -> steps, step_documents)

Each stage hands its output to the next; none reaches back.
"""
