"""HTTP API of the judge: human labels in, calibration report out, anchor re-scoring.

``COMPONENT`` adds ``router`` to the server (entry point ``judge`` of ``ragfault.components``); the
judge runner the anchors are re-scored with is built from the ``[judge]`` table on first use.
"""

from __future__ import annotations

import threading
from typing import Any

import anyio
from fastapi import APIRouter, HTTPException, Request
from pydantic import BaseModel, ConfigDict, Field

from collector.api.routes import protected_router
from collector.components import Component, Context
from evaluators.judge.calibration import accept, calibration_report, parse_labels, store_labels
from ragfault_core.errors import ConfigError, PermanentError


class AcceptRequest(BaseModel):
    """The judge version to trust; a JSON body, never query parameters (a cross-site form could
    send those)."""

    model_config = ConfigDict(extra="forbid")

    model: str = Field(..., min_length=1)
    prompt_version: str = Field(..., min_length=1)


def router(ctx: Context) -> APIRouter:
    r = protected_router(ctx)
    built: list[Any] = []  # the judge runner, once built
    building = threading.Lock()

    def write(fn: Any) -> Any:
        return ctx.writer.call(fn, timeout=300)

    def judge_runner() -> Any:
        with building:
            if not built or built[0] is None:
                from evaluators.judge.service import build_judge_runner

                built[:] = [build_judge_runner(ctx)]
            return built[0]

    @r.post("/labels", summary="Store human labels (JSON object, JSON array or JSONL body)")
    async def post_labels(request: Request) -> dict[str, Any]:
        body = await request.body()
        try:
            labels = parse_labels(body)
        except PermanentError as exc:
            raise HTTPException(400, str(exc)) from exc
        n = await anyio.to_thread.run_sync(lambda: store_labels(write, labels))
        return {"loaded": n}

    @r.get("/judge/calibration", summary="Agreement with human labels and drift, per judge version")
    async def calibration(model: str | None = None, prompt_version: str | None = None) -> dict[str, Any]:
        def work() -> dict[str, Any]:
            con = ctx.store.cursor()
            try:
                return calibration_report(con, model, prompt_version)
            finally:
                con.close()

        return await anyio.to_thread.run_sync(work)

    @r.post("/judge/anchors/rescore", summary="Re-score the anchor set with the configured judge")
    async def rescore() -> dict[str, Any]:
        def work() -> int:
            runner = judge_runner()
            if runner is None:
                raise ConfigError("no [judge] table in the config file")
            return int(runner.rescore_anchors())

        try:
            return {"rescored": await anyio.to_thread.run_sync(work)}
        except ConfigError as exc:
            raise HTTPException(409, str(exc)) from exc

    @r.post("/judge/accept", summary="Trust a judge version after reading its drift report (JSON body)")
    async def accept_version(body: AcceptRequest) -> dict[str, Any]:
        model, prompt_version = body.model, body.prompt_version

        def work() -> dict[str, Any]:
            con = ctx.store.cursor()
            try:
                report = calibration_report(con, model, prompt_version)["drift"]
            finally:
                con.close()
            accept(write, model, prompt_version, report)
            return {"trusted": {"model": model, "prompt_version": prompt_version}, "drift": report}

        return await anyio.to_thread.run_sync(work)

    return r


COMPONENT = Component("judge", table="judge", routers=(router,), order=40)
