"""Retention: delete old traces by age and by size, per service (config file table ``[retention]``).

Example::

    [retention]
    enabled = true
    max_age_days = 30          # every service
    max_traces = 1_000_000     # per service: the oldest beyond this go
    export_before_delete = true
    export_dir = "./archive"   # Parquet, partitioned by day (see collector.api.export)

    [retention.services.checkout-bot]
    max_age_days = 7

Deleting a trace removes its rows from every table that has a ``trace_id`` column (spans, steps,
step_documents, evaluations, evaluation_history, eval_log, feedback, judge verdicts, …) and the
``traces`` row, in one transaction on the writer thread, so no reader ever sees half a trace.
``human_labels`` are kept: they are curated calibration data. Traces still waiting for their settle
time are never deleted by size, only by age.

Metric data points have no trace, and log records need not have one: they are deleted by their own
age under their service's ``max_age_days`` — points always, log records when no stored trace is
theirs (a trace's records go with it). With ``export_before_delete`` they are exported first,
partitioned by the day of their time.

Age and order are the time ragfault received the data (``traces.first_received_at``, the
``received_at`` of records and points), never a time the client sent: a client's clock is not to be
trusted, and a trace, record or point dated in the future would otherwise outlive every age limit
and, by size, count as newer than all the traces received after it, pushing them out.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import anyio
from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from collector.api.export import KEEP_OUT, export_old_signals, export_traces, select_traces
from collector.api.routes import protected_router
from collector.components import Component, Context
from collector.store import retention as store_retention
from collector.store.base import Tx
from ragfault_core.errors import ConfigError, PermanentError, RagfaultError
from ragfault_core.settings import explain, load_toml

log = logging.getLogger("ragfault.retention")

WriteFn = Callable[[Callable[[Tx], Any]], Any]


class ServiceRetention(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    max_age_days: float | None = Field(None, gt=0, description="Delete traces first received longer ago.")
    max_traces: int | None = Field(
        None, gt=0, description="Keep at most this many traces, the last received."
    )
    max_spans: int | None = Field(
        None, gt=0, description="Keep at most this many spans (whole traces, the last received)."
    )


class RetentionSettings(ServiceRetention):
    enabled: bool = Field(False, description="Run retention in the server every interval.")
    interval_seconds: float = Field(3600.0, gt=0, description="Time between retention rounds.")
    services: dict[str, ServiceRetention] = Field(
        default_factory=dict, description="Per service.name; unset fields fall back to the table's own."
    )
    export_before_delete: bool = Field(False, description="Write deleted traces to Parquet first.")
    export_dir: str | None = Field(None, description="Where export_before_delete writes.")
    keep_tables: tuple[str, ...] = Field(
        KEEP_OUT, description="Tables with a trace_id that retention leaves alone."
    )
    batch_traces: int = Field(10_000, gt=0, description="Traces deleted per transaction.")

    @model_validator(mode="after")
    def _check(self) -> RetentionSettings:
        if self.export_before_delete and not self.export_dir:
            raise ValueError("export_before_delete needs export_dir")
        return self

    def for_service(self, service: str | None) -> ServiceRetention:
        own = self.services.get(service or "")
        if own is None:
            return ServiceRetention(
                max_age_days=self.max_age_days, max_traces=self.max_traces, max_spans=self.max_spans
            )
        return ServiceRetention(
            max_age_days=own.max_age_days if own.max_age_days is not None else self.max_age_days,
            max_traces=own.max_traces if own.max_traces is not None else self.max_traces,
            max_spans=own.max_spans if own.max_spans is not None else self.max_spans,
        )


def load_retention_settings(config_file: str | Path | None) -> RetentionSettings:
    data = load_toml(config_file).get("retention", {})
    try:
        return RetentionSettings(**data)
    except ValidationError as exc:
        raise ConfigError(f"invalid settings: {explain(exc, 'retention')}") from exc


def utcnow() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


def expired_traces(con: Tx, settings: RetentionSettings, now: datetime | None = None) -> list[str]:
    """Trace ids past their service's age or size limit."""
    now = now or utcnow()
    out: list[str] = []
    for service in store_retention.trace_services(con):
        policy = settings.for_service(service)
        cutoff = now - timedelta(days=policy.max_age_days) if policy.max_age_days else None
        out.extend(
            store_retention.expired_traces(
                con, service, cutoff=cutoff, max_traces=policy.max_traces, max_spans=policy.max_spans
            )
        )
    return out


def delete_traces(con: Tx, trace_ids: list[str], keep: tuple[str, ...] = KEEP_OUT) -> dict[str, int]:
    """Delete these traces from every per-trace table in one transaction (writer thread)."""
    return store_retention.delete_traces(con, trace_ids, keep)


def apply_retention(
    cursor: Tx,
    write: WriteFn,
    settings: RetentionSettings,
    now: datetime | None = None,
    export_dir: str | Path | None = None,
) -> dict[str, int]:
    """One retention round: find, optionally export, delete. Returns rows deleted per table."""
    ids = expired_traces(cursor, settings, now)
    target = export_dir or (settings.export_dir if settings.export_before_delete else None)
    total: dict[str, int] = {}
    for i in range(0, len(ids), settings.batch_traces):
        chunk = ids[i : i + settings.batch_traces]
        if target:
            export_traces(cursor, chunk, target)
        for k, v in write(_deleter(chunk, settings.keep_tables)).items():
            total[k] = total.get(k, 0) + v
    for service, before in signal_cutoffs(cursor, settings, now):
        if target:
            export_old_signals(cursor, service, before, target)
        for k, v in write(_signal_deleter(service, before)).items():
            if v:  # (a round that deletes none keeps the counts it had before points were kept by age)
                total[k] = total.get(k, 0) + v
    return total


def signal_cutoffs(
    con: Tx, settings: RetentionSettings, now: datetime | None = None
) -> list[tuple[str | None, datetime]]:
    """For each service with log records or metric points and an age limit: the time before which
    its points (and its log records of no stored trace) are deleted."""
    now = now or utcnow()
    out: list[tuple[str | None, datetime]] = []
    for service in store_retention.signal_services(con):
        days = settings.for_service(service).max_age_days
        if days:
            out.append((service, now - timedelta(days=days)))
    return out


class RetentionService:
    """Runs retention in the server every ``interval_seconds`` when ``[retention] enabled``."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.settings = ctx.table("retention", load_retention_settings)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="ragfault-retention", daemon=True)
        ctx.metrics.describe(
            "ragfault_retention_deleted_traces_total", "counter", "Traces deleted by retention."
        )

    def start(self) -> None:
        if self.settings.enabled:
            self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(60)

    def run_once(self, now: datetime | None = None) -> dict[str, int]:
        cursor = self.ctx.store.cursor()
        try:
            counts = apply_retention(
                cursor, lambda fn: self.ctx.writer.call(fn, timeout=600), self.settings, now
            )
        finally:
            cursor.close()
        if counts.get("traces"):
            self.ctx.metrics.inc("ragfault_retention_deleted_traces_total", counts["traces"])
            log.info("retention deleted %d traces", counts["traces"])
        return counts

    def _loop(self) -> None:
        while not self._stop.wait(self.settings.interval_seconds):
            try:
                self.run_once()
            except Exception:
                log.exception("retention round failed")


def _deleter(trace_ids: list[str], keep: tuple[str, ...]) -> Callable[[Tx], dict[str, int]]:
    """A writer job deleting these traces."""

    def job(tx: Tx) -> dict[str, int]:
        return store_retention.delete_traces(tx, trace_ids, keep)

    return job


def _signal_deleter(service: str | None, before: datetime) -> Callable[[Tx], dict[str, int]]:
    """A writer job deleting a service's metric points (and traceless log records) from before ``before``."""

    def job(tx: Tx) -> dict[str, int]:
        return store_retention.delete_old_signals(tx, service, before)

    return job


class ExportRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    out_dir: str = Field(..., description="Directory on the server's file system.")
    service: str | None = None
    since: datetime | None = None
    until: datetime | None = None
    older_than_days: float | None = Field(None, gt=0, description="Only traces that started longer ago.")
    retention: bool = Field(False, description="Select the traces the [retention] policy would delete.")
    delete_after: bool = Field(False, description="Delete the exported traces afterwards.")


def run_export(
    cursor: Tx,
    write: WriteFn,
    req: ExportRequest,
    settings: RetentionSettings,
    now: datetime | None = None,
) -> dict[str, Any]:
    """Export (and optionally delete) the selected traces, in batches; the body of API and CLI."""
    now = now or utcnow()
    if req.retention:
        ids = expired_traces(cursor, settings, now)
    else:
        until = req.until
        if req.older_than_days:
            cut = now - timedelta(days=req.older_than_days)
            until = min(until, cut) if until else cut
        ids = select_traces(cursor, service=req.service, since=req.since, until=until)
    rows: dict[str, int] = {}
    deleted: dict[str, int] = {}
    for i in range(0, len(ids), settings.batch_traces):
        chunk = ids[i : i + settings.batch_traces]
        for k, v in export_traces(cursor, chunk, req.out_dir).items():
            rows[k] = rows.get(k, 0) + v
        if req.delete_after:
            for k, v in write(_deleter(chunk, settings.keep_tables)).items():
                deleted[k] = deleted.get(k, 0) + v
    return {"traces": len(ids), "rows": rows, "deleted": deleted, "out_dir": str(req.out_dir)}


def router(ctx: Context) -> APIRouter:
    r = protected_router(ctx)

    @r.post(
        "/export",
        summary="Export traces to Parquet (partitioned by day) on the server; optionally delete them",
    )
    async def export(body: ExportRequest) -> dict[str, Any]:
        service = ctx.find(RetentionService)
        policy = service.settings if service is not None else RetentionSettings()
        body = body.model_copy(update={"out_dir": _confined(body.out_dir, policy.export_dir)})

        def work() -> dict[str, Any]:
            cursor = ctx.store.cursor()
            try:
                return run_export(cursor, lambda fn: ctx.writer.call(fn, timeout=600), body, policy)
            except OSError as exc:  # the directory cannot be written: nothing of this batch was deleted
                reason = exc.strerror or str(exc).splitlines()[0]
                raise RagfaultError(f"cannot write the export to {body.out_dir}: {reason}") from exc
            finally:
                cursor.close()

        return await anyio.to_thread.run_sync(work)

    return r


def _confined(out_dir: str, root: str | None) -> str:
    """An API client may only write under the configured export directory of the server."""
    if not root:
        raise PermanentError(
            "exporting through the API needs [retention] export_dir on the server; "
            "or stop the server and run `ragfault export --db FILE` locally"
        )
    if "\x00" in out_dir:
        raise PermanentError("out_dir must not contain a NUL byte")
    base = Path(root).resolve()
    target = (base / out_dir).resolve()
    if target != base and base not in target.parents:
        raise PermanentError(f"out_dir must be inside the server's export directory {root}")
    return str(target)


# a lake runs its own (``collector.maintenance.lake_retention``: one collector at a time)
COMPONENT = Component(
    "retention", table="retention", service=RetentionService, routers=(router,),
    stores=frozenset({"duckdb"}), order=10,
)  # fmt: skip
