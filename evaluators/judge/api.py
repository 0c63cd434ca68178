"""HTTP API of the judge: human labels in, calibration report out, anchor re-scoring.

``router(runtime)`` is added to the server by ``ragfault.server._components`` through ``register``.
"""

from __future__ import annotations

from typing import Any

import anyio
from fastapi import APIRouter, HTTPException, Request
from pydantic import BaseModel, ConfigDict, Field

from collector.api import protected_router
from collector.errors import ConfigError, PermanentError
from evaluators.judge.calibration import accept, calibration_report, parse_labels, store_labels


class AcceptRequest(BaseModel):
    """The judge version to trust; a JSON body, never query parameters (a cross-site form could
    send those)."""

    model_config = ConfigDict(extra="forbid")

    model: str = Field(..., min_length=1)
    prompt_version: str = Field(..., min_length=1)


def router(runtime: Any) -> APIRouter:
    r = protected_router(runtime)

    def write(fn: Any) -> Any:
        return runtime.writer.call(fn, timeout=300)

    def judge_runner() -> Any:
        runner = getattr(runtime, "judge_runner", None)
        if runner is None:
            from evaluators.judge.service import build_judge_runner

            runner = build_judge_runner(runtime)
            runtime.judge_runner = runner
        return runner

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
            con = runtime.store.cursor()
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
            con = runtime.store.cursor()
            try:
                report = calibration_report(con, model, prompt_version)["drift"]
            finally:
                con.close()
            accept(write, model, prompt_version, report)
            return {"trusted": {"model": model, "prompt_version": prompt_version}, "drift": report}

        return await anyio.to_thread.run_sync(work)

    return r


def register(routers: list[Any], extensions: list[Any]) -> None:
    routers.append(router)
