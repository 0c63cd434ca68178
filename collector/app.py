"""The FastAPI application: OTLP/HTTP receiver, API, health and metrics on one port."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import asynccontextmanager
from typing import Any

from fastapi import APIRouter, FastAPI

from collector.api import api_router, health_router, install_error_handlers
from collector.receivers.otlp_http import make_router
from collector.runtime import Runtime

RouterFactory = Callable[[Runtime], APIRouter]


def create_app(
    runtime: Runtime, routers: Sequence[RouterFactory] = (), manage_lifecycle: bool = True
) -> FastAPI:
    """The app; ``routers`` are API additions from other packages (gold, KB, feedback, reports)."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> Any:
        if manage_lifecycle:
            runtime.start()
        try:
            yield
        finally:
            if manage_lifecycle:
                runtime.stop()

    app = FastAPI(
        title="ragfault",
        summary="Trace-ingesting evaluation for RAG and agent systems",
        version="0.1.0",
        lifespan=lifespan,
    )
    install_error_handlers(app)
    app.include_router(make_router(runtime.settings, runtime.pipeline, runtime.metrics))
    app.include_router(health_router(runtime))
    app.include_router(api_router(runtime))
    for factory in routers:
        app.include_router(factory(runtime))
    app.state.runtime = runtime
    return app
