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


class Metrics:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._values: dict[tuple[str, tuple[tuple[str, str], ...]], float] = defaultdict(float)
        self._summaries: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0])  # count, sum, max

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

    def describe(self, name: str, kind: str, help_text: str) -> None:
        _HELP.setdefault(name, (kind, help_text))

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
                if not series:
                    lines.append(f"{name} 0")
                for labels, v in sorted(series):
                    lab = ",".join(f'{k}="{val}"' for k, val in labels)
                    lines.append(f"{name}{{{lab}}} {v:g}" if lab else f"{name} {v:g}")
        return "\n".join(lines) + "\n"
