"""OTLP receivers: thin decoders (HTTP, gRPC) over one ``Pipeline.export`` call."""
