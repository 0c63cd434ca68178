"""The judge tier's records: its calls and spend, the response cache, its verdicts, the judge versions
and the human labels that calibrate them. The statements are ``sql/judging/*.sql``; rows go in as
tuples in the tables' column order."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from collector.store.base import Con, operation
from collector.store.file.connect import sibling
from collector.store.rows import HumanLabel, JudgeVerdictRow, JudgeVersion
from collector.store.sqlfiles import sql
from collector.store.tx import transaction


@operation
def cache_handle(tx: Con) -> Con:
    """A connection of the judge cache's own, to the instance and database ``tx`` uses: its reads
    and writes never wait for the judge runner's cursor."""
    return sibling(tx)


@operation
def recent_spend(con: Con, since: datetime) -> list[tuple[float, int, float]]:
    """(epoch seconds, tokens, USD) of each judge call since ``since``, oldest first."""
    rows = con.execute(sql("judging", "recent_spend"), {"since": since}).fetchall()
    return [(float(at), int(tokens), float(cost)) for at, tokens, cost in rows]


@operation
def anchors_scored(con: Con, model: str, prompt_version: str) -> int:
    """How many anchor verdicts this judge version has."""
    return int(
        con.execute(sql("judging", "anchors_scored"), {"m": model, "p": prompt_version}).fetchall()[0][0]
    )


@operation
def anchor_traces(con: Con) -> list[str]:
    return [r[0] for r in con.execute(sql("judging", "anchor_traces")).fetchall()]


@operation
def cached_response(con: Con, key: str) -> str | None:
    """The cached judge response (JSON text) of a key, or None."""
    # fetchall, not fetchone: duckdb 2 keeps a fetchone() result open on the connection
    rows = con.execute(sql("judging", "cache_get"), [key]).fetchall()
    return rows[0][0] if rows else None


_CACHE_COLUMNS = (
    "key",
    "task",
    "model",
    "prompt_version",
    "input_hash",
    "context_hash",
    "response",
    "created_at",
)


def _version_seen(con: Con, model: str, prompt_version: str, now: datetime) -> None:
    con.execute(
        sql("judging", "version_seen"), {"model": model, "prompt_version": prompt_version, "first_seen": now}
    )


@operation
def write_run(
    con: Con,
    *,
    cache_rows: Sequence[tuple[Any, ...]],
    calls: Sequence[tuple[Any, ...]],
    verdicts: Sequence[tuple[Any, ...]],
    model: str,
    prompt_version: str,
    anchors: bool,
    over_budget: Sequence[str],
    now: datetime,
) -> None:
    """What one judge run records, in one transaction: new cache entries, the calls made, the
    verdicts (an anchor run replaces the version's earlier anchor verdicts and stamps when it
    scored them), the version seen, and an ``eval_log`` row per trace skipped on budget."""
    with transaction(con):
        if cache_rows:
            for row in cache_rows:  # (one at a time: a key twice in the run is cached once)
                con.execute(sql("judging", "cache_insert"), dict(zip(_CACHE_COLUMNS, row, strict=True)))
        if calls:
            con.executemany(sql("judging", "call_insert"), list(calls))
        if verdicts:
            if anchors:
                con.execute(sql("judging", "anchor_verdicts_drop"), [model, prompt_version])
            con.executemany(sql("judging", "verdict_insert"), list(verdicts))
        _version_seen(con, model, prompt_version, now)
        if anchors:
            con.execute(sql("judging", "anchors_scored_at"), [now, model, prompt_version])
        if over_budget:
            con.executemany(sql("judging", "over_budget_log"), [(t, now) for t in over_budget])


@operation
def insert_labels(con: Con, rows: Sequence[tuple[Any, ...]]) -> None:
    """Human labels, as tuples in the ``human_labels`` column order."""
    if rows:
        con.executemany(sql("judging", "labels_insert"), list(rows))


@operation
def human_labels(con: Con) -> list[HumanLabel]:
    """(trace_id, metric, item, label, anchor) of every human label."""
    return [HumanLabel._make(r) for r in con.execute(sql("judging", "human_labels")).fetchall()]


@operation
def latest_verdicts(con: Con, anchor_only: bool = False) -> list[JudgeVerdictRow]:
    """(trace_id, metric, item, label, model, prompt_version, source): the latest verdict of each
    item per judge version (of the anchor verdicts only, with ``anchor_only``)."""
    rows = con.execute(sql("judging", "latest_verdicts"), {"anchor_only": anchor_only}).fetchall()
    return [JudgeVerdictRow._make(r) for r in rows]


@operation
def versions(con: Con) -> list[JudgeVersion]:
    """(model, prompt_version, first_seen, anchors_scored_at, trusted) of each version, oldest first."""
    return [JudgeVersion._make(r) for r in con.execute(sql("judging", "versions")).fetchall()]


@operation
def trust(con: Con, model: str, prompt_version: str, drift: str | None, now: datetime) -> None:
    """Mark a judge version trusted (recording it first if it was never seen)."""
    _version_seen(con, model, prompt_version, now)
    con.execute(sql("judging", "trust"), [now, drift, model, prompt_version])
