"""The demo: a sample helpdesk app, instrumented with OpenTelemetry and OpenInference conventions,
answering a bundled gold set in which every root cause of failure occurs."""
