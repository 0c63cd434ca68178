"""ragfault: find which link of a RAG or agent evidence chain broke, from OpenTelemetry traces."""

__version__ = "0.1.0"
