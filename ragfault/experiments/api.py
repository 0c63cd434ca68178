"""``/api/v1/compare``, ``/api/v1/runs`` (marks) and the other experiment endpoints."""

from __future__ import annotations

from typing import Any

import anyio
from fastapi import APIRouter, Query
from pydantic import BaseModel, ConfigDict, Field

from collector.api.routes import protected_router
from collector.components import Component, Context
from collector.store import experiments as store_experiments
from collector.store.reader import run_select
from ragfault import compare
from ragfault.experiments.config import load_experiment_settings


class RunMark(BaseModel):
    model_config = ConfigDict(extra="forbid")

    run_group: str | None = Field(None, min_length=1, description="The configuration this run repeats.")
    baseline_of: str | None = Field(
        None, min_length=1, description="The run this one is the closed-book twin of."
    )


def query_fn(ctx: Context) -> compare.QueryFn:
    def q(text: str, params: dict[str, Any]) -> dict[str, Any]:
        con = ctx.store.cursor()
        try:
            return run_select(
                con, text, params, row_cap=1_000_000, timeout=ctx.settings.sql_timeout_seconds
            ).as_dict()
        finally:
            con.close()

    return q


def router(ctx: Context) -> APIRouter:
    r = protected_router(ctx)
    settings = ctx.table("experiments", load_experiment_settings)
    limiter = anyio.CapacityLimiter(2)

    @r.get("/compare", summary="A run against a baseline run: deltas with bootstrap intervals, McNemar")
    async def get_compare(
        run: str, baseline: str,
        resamples: int | None = Query(None, ge=0, le=100_000), seed: int | None = None,
    ) -> dict[str, Any]:  # fmt: skip
        def work() -> dict[str, Any]:
            n = settings.resamples if resamples is None else resamples
            s = settings.seed if seed is None else seed
            return compare.build(query_fn(ctx), run_id=run, baseline=baseline, resamples=n, seed=s)

        return await anyio.to_thread.run_sync(work, limiter=limiter)

    @r.put("/runs/{run_id}", summary="Mark a run: repeat of a configuration, or closed-book twin of a run")
    async def mark_run(run_id: str, body: RunMark) -> dict[str, Any]:
        def job(con: Any) -> None:
            store_experiments.mark_run(con, run_id, body.run_group, body.baseline_of)

        await anyio.to_thread.run_sync(lambda: ctx.writer.call(job, timeout=60))
        return {"run_id": run_id, "run_group": body.run_group, "baseline_of": body.baseline_of}

    @r.get("/kb/changes", summary="Documents a reload changed, and the cases to re-run because of them")
    async def kb_changes(run: str | None = None, since: str | None = None) -> dict[str, Any]:
        from ragfault.experiments import affected

        return await anyio.to_thread.run_sync(
            lambda: affected.changes(query_fn(ctx), run, since), limiter=limiter
        )

    @r.get("/runs", summary="Runs with their marks (run_group, baseline_of)")
    async def list_runs() -> dict[str, Any]:
        return {
            "runs": list((await anyio.to_thread.run_sync(lambda: compare.run_marks(query_fn(ctx)))).values())
        }

    return r


COMPONENT = Component("experiments", table="experiments", routers=(router,), order=50)
