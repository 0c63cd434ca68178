"""The FastAPI application: OTLP/HTTP receiver, API, health and metrics on one port."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI

from collector.api.docs import docs_router
from collector.api.routes import api_router, health_router, install_error_handlers
from collector.api.web import WebGuard
from collector.components import RouterFactory
from collector.receivers.bodies import BodyLimit
from collector.receivers.otlp_http import make_router
from collector.runtime import Runtime


def create_app(
    runtime: Runtime, routers: Sequence[RouterFactory] = (), manage_lifecycle: bool = True
) -> FastAPI:
    """The app; ``routers`` are the components' API additions (gold, KB, feedback, reports)."""

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
        docs_url=None,  # FastAPI's pages load their scripts from a CDN: /docs is collector.api.docs's
        redoc_url=None,
    )
    # every route's body is bounded (collector.receivers.bodies), inside the guard: a request the guard
    # refuses (host, origin, token) has none of its body read
    app.add_middleware(
        BodyLimit,
        limits=runtime.settings.api_body_bytes,
        idle_timeout=runtime.settings.body_timeout_seconds,
        metrics=runtime.metrics,
        budget=runtime.pipeline.budget,
    )
    # every route, including those added below by other packages, is behind the guard
    app.add_middleware(WebGuard, settings=runtime.settings, metrics=runtime.metrics)
    install_error_handlers(app)
    app.include_router(docs_router(app))
    app.include_router(make_router(runtime.settings, runtime.pipeline, runtime.metrics))
    app.include_router(health_router(runtime))
    app.include_router(api_router(runtime))
    for factory in routers:
        app.include_router(factory(runtime))
    app.state.runtime = runtime
    return app
