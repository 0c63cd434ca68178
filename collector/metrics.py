"""A small Prometheus text-format registry (counters, gauges, summaries) for ``GET /metrics``."""

from __future__ import annotations

import threading
from collections import defaultdict

_HELP = {
    "ragfault_spans_received_total": ("counter", "Spans received by the OTLP receivers."),
    "ragfault_spans_stored_total": ("counter", "Spans committed to the store (new ones)."),
    "ragfault_spans_duplicate_total": ("counter", "Re-sent spans ignored because already stored."),
    "ragfault_spans_rejected_total": ("counter", "Spans rejected as invalid (partial success)."),
    "ragfault_log_records_received_total": ("counter", "Log records received by the OTLP receivers."),
    "ragfault_log_records_stored_total": ("counter", "Log records committed to the store (new ones)."),
    "ragfault_log_records_duplicate_total": (
        "counter",
        "Re-sent log records ignored because already stored.",
    ),
    "ragfault_log_records_rejected_total": ("counter", "Log records rejected as invalid (partial success)."),
    "ragfault_metric_points_received_total": (
        "counter",
        "Metric data points received by the OTLP receivers.",
    ),
    "ragfault_metric_points_stored_total": (
        "counter",
        "Metric data points committed to the store (new ones).",
    ),
    "ragfault_metric_points_duplicate_total": (
        "counter",
        "Re-sent data points ignored because already stored.",
    ),
    "ragfault_metric_points_rejected_total": (
        "counter",
        "Data points rejected as invalid (partial success).",
    ),
    "ragfault_requests_total": ("counter", "OTLP export requests by transport and outcome."),
    "ragfault_future_timestamps_clamped_total": (
        "counter",
        "Spans, log records and data points dated past future_grace_seconds, stored with the receive "
        "time (by signal).",
    ),
    "ragfault_ingest_rebuilds_total": (
        "counter",
        "Export requests decoded again with a larger share of the ingest budget (their rows needed "
        "more than their reservation).",
    ),
    "ragfault_ingest_throttled_total": ("counter", "Export requests refused because the queue was full."),
    "ragfault_write_errors_total": ("counter", "Store writes that failed and were reported as retryable."),
    "ragfault_queue_spans": ("gauge", "Spans waiting for the writer."),
    "ragfault_write_seconds": ("summary", "Time to commit one coalesced batch."),
    "ragfault_checkpoint_seconds": (
        "summary",
        "Time one checkpoint of the WAL into the database file held the writer (every write waits).",
    ),
    "ragfault_checkpoint_wait_seconds": (
        "summary",
        "Time a checkpoint waited for the other writer lanes' work in progress before it began.",
    ),
}


def _escape(value: str) -> str:
    """A label value in the text format: a service name sent by a client may hold a quote, a
    backslash or a line break, which would otherwise end the value or the line."""
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


class Metrics:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._values: dict[tuple[str, tuple[tuple[str, str], ...]], float] = defaultdict(float)
        self._summaries: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0])  # count, sum, max
        self._sparse: set[str] = set()

    def inc(self, name: str, value: float = 1, **labels: str) -> None:
        with self._lock:
            self._values[(name, tuple(sorted(labels.items())))] += value

    def set(self, name: str, value: float, **labels: str) -> None:
        with self._lock:
            self._values[(name, tuple(sorted(labels.items())))] = value

    def observe(self, name: str, value: float) -> None:
        with self._lock:
            s = self._summaries[name]
            s[0] += 1
            s[1] += value
            s[2] = max(s[2], value)

    def get(self, name: str, **labels: str) -> float:
        with self._lock:
            return self._values.get((name, tuple(sorted(labels.items()))), 0.0)

    def describe(self, name: str, kind: str, help_text: str, sparse: bool = False) -> None:
        """``sparse``: a labelled gauge whose absent series mean "no value" (a rate with an empty
        denominator): with no series the name is left out instead of written as 0."""
        _HELP.setdefault(name, (kind, help_text))
        if sparse:
            with self._lock:
                self._sparse.add(name)

    def replace(self, name: str, series: dict[tuple[tuple[str, str], ...], float]) -> None:
        """Every series of ``name`` at once (labels as sorted pairs): those not given are gone, so a
        service that left the window or a rate that became not applicable leaves no stale value."""
        with self._lock:
            for key in [k for k in self._values if k[0] == name]:
                del self._values[key]
            for labels, value in series.items():
                self._values[(name, tuple(sorted(labels)))] = value

    def render(self) -> str:
        lines: list[str] = []
        with self._lock:
            names = sorted({k[0] for k in self._values} | set(self._summaries) | set(_HELP))
            for name in names:
                kind, help_text = _HELP.get(name, ("untyped", name))
                lines.append(f"# HELP {name} {help_text}")
                lines.append(f"# TYPE {name} {kind}")
                if kind == "summary":
                    c, total, mx = self._summaries.get(name, [0.0, 0.0, 0.0])
                    lines.append(f"{name}_count {c:g}")
                    lines.append(f"{name}_sum {total:.6f}")
                    lines.append(f"{name}_max {mx:.6f}")
                    continue
                series = [(k[1], v) for k, v in self._values.items() if k[0] == name]
                if not series and name in self._sparse:
                    continue
                if not series:
                    lines.append(f"{name} 0")
                for labels, v in sorted(series):
                    lab = ",".join(f'{k}="{_escape(val)}"' for k, val in labels)
                    lines.append(f"{name}{{{lab}}} {v:g}" if lab else f"{name} {v:g}")
        return "\n".join(lines) + "\n"
