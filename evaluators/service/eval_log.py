"""``eval_log`` rows a round of the scheduler collects (one per decision on a trace, evaluator NULL),
written in one job with the span counts the cheap tier saw (``collector.store.verdicts.write_log``)."""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from collector.store import verdicts
from collector.store.base import Tx
from evaluators.service.running import LOG_SCHEMA, utcnow


class LogBuffer:
    """eval_log rows collected during a round, written in one job."""

    def __init__(self) -> None:
        self.cols: dict[str, list[Any]] = {f.name: [] for f in LOG_SCHEMA}

    def add(
        self, trace_id: str, tier: str, decision: str, reason: str | None, generation: int | None
    ) -> None:
        for k, v in zip(
            ("trace_id", "tier", "evaluator", "decision", "reason", "generation", "logged_at"),
            (trace_id, tier, None, decision, reason, generation, utcnow()),
            strict=True,
        ):
            self.cols[k].append(v)

    def __len__(self) -> int:
        return len(self.cols["trace_id"])

    def table(self) -> pa.Table:
        return pa.table([pa.array(self.cols[f.name], f.type) for f in LOG_SCHEMA], schema=LOG_SCHEMA)


def write_log(con: Tx, buf: LogBuffer, done: dict[str, int] | None = None) -> None:
    """eval_log rows and (optionally) the span counts the cheap tier saw, in one transaction."""
    verdicts.write_log(con, buf.table(), done)
