"""ragfault collector: OTLP receivers, the span store and the step normalizer.

The pipeline, in the order data flows, one folder a stage::

    receivers (otlp_http, otlp_grpc)  ->  receivers.payload.decode (bytes -> ExportTraceServiceRequest)
        -> ingest.span_rows.flatten (spans, and through normalize their steps and step documents, as rows)
        -> store.schema.batch_to_arrow (Arrow tables; these three run in ingest.decode_pool's workers)
        -> store.writer (commits; acknowledges after COMMIT)  ->  settling (assembles settled traces)

Each stage hands its output to the next; none reaches back. ``api`` serves what is stored,
``maintenance`` expires it.
"""
