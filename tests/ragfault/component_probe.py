"""A third party's server component, as a package installed beside ragfault would write it: its
own config table, a background service and a router, built from the typed context alone.

``tests/ragfault/test_components.py`` installs it through an entry point of a small distribution
made in the test (or passes it in the server's list) and reads what it recorded in ``EVENTS``.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict

from collector.components import Component, Context
from evaluators.service.scheduler import EvaluationService
from ragfault_core.settings import load_toml

EVENTS: list[tuple[str, Any]] = []


class ProbeSettings(BaseModel):
    """The ``[probe]`` table."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    greeting: str = "hello"


def load_probe_settings(config_file: str | None) -> ProbeSettings:
    return ProbeSettings(**load_toml(config_file).get("probe", {}))


class Probe:
    """Records what it was given and what it could reach at start and at stop."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.settings = ctx.table("probe", load_probe_settings)
        EVENTS.append(("built", ctx))

    def start(self) -> None:
        # components that start before it are found by type, already running
        EVENTS.append(("start", self.ctx.find(EvaluationService)))

    def stop(self) -> None:
        # the core stops after every component: the writer still takes a job
        EVENTS.append(("stop", self.ctx.writer.call(lambda tx: 42, timeout=10)))


def router(ctx: Context) -> APIRouter:
    r = APIRouter(prefix="/api/v1/probe")

    @r.get("")
    async def probe() -> dict[str, Any]:
        found = ctx.find(Probe)
        return {
            "greeting": found.settings.greeting if found is not None else None,
            "evaluation": ctx.find(EvaluationService) is not None,
        }

    return r


COMPONENT = Component("probe", table="probe", service=Probe, routers=(router,), order=200)
NOT_A_COMPONENT = {"name": "probe"}
