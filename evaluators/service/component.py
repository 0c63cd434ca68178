"""Evaluation inside a running server: the scheduler that evaluates settled traces, and the API
for loading gold cases and the knowledge base and for re-running evaluators.

The backlog is the database, not memory: a trace is waiting while it is settled and its
``evaluated_spans`` differs from ``assembled_spans`` (a late span re-settles it and so re-queues it;
feedback or a reloaded gold case re-queue it by clearing ``evaluated_spans``). The scheduler takes the
oldest waiting traces in batches of ``[evaluation] batch_size``, so memory stays bounded however far
behind it is, and ``/metrics`` shows the lag (now − settle time of the oldest waiting trace).

While more than one batch is waiting, a round takes up to ``ROUND_GROUPS`` groups of
``GROUP_BATCHES`` × (workers + 1) batches, each group picked when a worker can take its first batch
(``[evaluation] workers``, default one a core, at most 4), and evaluates them side by side in worker
processes (``evaluators.service.pool``, started the first time it is needed), with the rows identical to
in-process evaluation. Steady traffic goes to the workers too: a short backlog is evaluated in the
server process only while fewer than a batch of traces were evaluated in the last
``POOL_RATE_SECONDS``, so a quiet server runs no extra processes. Besides using more cores, this
keeps the evaluators off the server's GIL, which the receivers and the writer need (a steady 400
traces a second, settled a few hundred a round and evaluated in the server process, held its ingest
to about 375 in ``bench/sustain.py``), and the workers run at a lower CPU priority, so storing spans
goes first when the machine cannot keep up with both. The workers stop after ``POOL_IDLE_SECONDS``
without that much work.

Per group of traces picked: read annotations from the spans into ``feedback`` → run the cheap tier
on every trace, batch by batch → once they are written, decide the judge tier per trace
(``evaluators.service.sampling_decision``) → hand the sample to the judge thread through a bounded queue.
When the queue is full, or a trace waited longer than ``judge_max_wait_seconds``, the judge tier
sheds it with ``over_budget`` / reason ``backlog``. Every decision is an ``eval_log`` row (evaluator NULL), so
``SELECT * FROM eval_status WHERE trace_id = …`` says why a trace has no judge score.

``COMPONENT`` is the server's evaluation component (entry point ``evaluation`` of the
``ragfault.components`` group): the scheduler, and the evaluation, feedback and live-traffic APIs.
"""

from __future__ import annotations

from fastapi import APIRouter

from collector.components import Component, Context
from evaluators.service import feedback as feedback_mod
from evaluators.service import live_api
from evaluators.service.eval_api import EvaluateRequest, router, select_traces_received
from evaluators.service.eval_log import LogBuffer
from evaluators.service.eval_log import write_log as _write_log
from evaluators.service.judge_tier import JudgeItem, JudgeTier
from evaluators.service.scheduler import (
    GROUP_BATCHES,
    IDLE_POLL_SECONDS,
    IDLE_TICK_SECONDS,
    POOL_IDLE_SECONDS,
    POOL_RATE_SECONDS,
    ROUND_GROUPS,
    WRITTEN_SINCE_MARGIN,
    EvaluationService,
)
from evaluators.service.tier_runners import build_judge, build_runner

__all__ = [
    "COMPONENT",
    "GROUP_BATCHES",
    "IDLE_POLL_SECONDS",
    "IDLE_TICK_SECONDS",
    "POOL_IDLE_SECONDS",
    "POOL_RATE_SECONDS",
    "ROUND_GROUPS",
    "WRITTEN_SINCE_MARGIN",
    "EvaluateRequest",
    "EvaluationService",
    "JudgeItem",
    "JudgeTier",
    "LogBuffer",
    "_write_log",
    "build_judge",
    "build_runner",
    "router",
    "select_traces_received",
]


def feedback_router(ctx: Context) -> APIRouter:
    """The feedback API, waking the scheduler when feedback re-queues traces."""

    def wake() -> None:
        svc = ctx.find(EvaluationService)
        if svc is not None:
            svc.wake()

    return feedback_mod.router(ctx, wake)


COMPONENT = Component(
    "evaluation", table="evaluation", service=EvaluationService,
    routers=(router, feedback_router, live_api.router), order=30,
)  # fmt: skip
