"""Ingest: an export request flattened into span, step and document rows and handed to the
writer (``pipeline``), in the decode workers when there are some (``decode_pool``)."""
