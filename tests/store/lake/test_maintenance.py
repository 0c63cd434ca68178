"""Leases in the catalog database and the lake's scheduled maintenance, against a real PostgreSQL:
one holder at a time, a dead holder's lease free once it expires (an injected clock), and a
maintenance turn that removes duplicate copies, merges small files and runs in one process only."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from collector.store.lake.store import LakeStore
from collector.store.lease import CatalogLeases
from collector.store.maintenance import LEASE, Maintainer, maintain
from tests.collector.test_store_write import arrow, rag_trace
from tests.store.conftest import Lake


class Clock:
    def __init__(self) -> None:
        self.t = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.t

    def step(self, seconds: float) -> None:
        self.t += timedelta(seconds=seconds)


@pytest.fixture
def leases(lake: Lake) -> Iterator[tuple[CatalogLeases, CatalogLeases, Clock]]:
    clock = Clock()
    a = CatalogLeases(lake.catalog, holder="collector-a", now=clock, extension_repository=False)
    b = CatalogLeases(lake.catalog, holder="collector-b", now=clock, extension_repository=False)
    try:
        yield a, b, clock
    finally:
        a.close()
        b.close()


def test_one_holder_at_a_time_and_a_dead_holders_lease_expires(
    leases: tuple[CatalogLeases, CatalogLeases, Clock],
) -> None:
    a, b, clock = leases
    assert a.held_by("settle") == (None, None)
    assert a.claim("settle", 30) and not b.claim("settle", 30)
    assert a.held_by("settle") == ("collector-a", clock.t + timedelta(seconds=30))
    clock.step(20)
    assert a.claim("settle", 30)  # a renewal moves the expiry on
    assert a.held_by("settle")[1] == clock.t + timedelta(seconds=30)
    clock.step(29)
    assert not b.claim("settle", 30)  # still a's
    clock.step(1)  # a stopped renewing (killed): its lease ends, b takes it
    assert b.claim("settle", 30) and not a.claim("settle", 30)
    assert b.claim("other", 5)  # names are independent
    b.release("settle")
    a.release("other")  # not a's: nothing happens
    assert a.claim("settle", 30) and not a.claim("other", 5)
    with pytest.raises(ValueError):
        a.claim("settle", 0)


def test_a_holder_name_is_quoted_not_executed(lake: Lake) -> None:
    odd = CatalogLeases(lake.catalog, holder="x'); DROP TABLE ragfault_lease; --", extension_repository=False)
    try:
        assert odd.claim("o'clock", 10)
        assert odd.held_by("o'clock")[0] == "x'); DROP TABLE ragfault_lease; --"
    finally:
        odd.close()


def test_maintenance_removes_copies_merges_files_and_runs_in_one_process(
    lake: Lake, leases: tuple[CatalogLeases, CatalogLeases, Clock]
) -> None:
    a, b, clock = leases
    first = LakeStore(lake.catalog, lake.data_path, extension_repository=False)
    second = LakeStore(lake.catalog, lake.data_path, extension_repository=False)
    try:
        commits = [[s for _ in range(40) for s in rag_trace()] for _ in range(8)]
        for spans in commits:  # eight commits of 80 spans: a data file a table each
            first.write_spans(first.cursor(), arrow(spans))
        second.write_spans(second.cursor(), arrow(commits[0][:2]))  # the other collector's copy of a trace
        con = first.cursor()
        assert con.execute(
            "SELECT count(*), count(DISTINCT (trace_id, span_id)) FROM span_rows"
        ).fetchone() == (
            642,
            640,
        )
        parquet_before = sorted(Path(lake.data_path).rglob("*.parquet"))

        ma = Maintainer(first, a, interval_seconds=600, keep_snapshots_seconds=0)
        mb = Maintainer(second, b, interval_seconds=600, keep_snapshots_seconds=0)
        done = ma.run_once()
        assert done is not None and mb.run_once() is None  # one process a turn
        assert done["duplicates_deleted"]["span_rows"] == 2
        assert done["data_files_after_merge"] < done["data_files_before"]
        assert con.execute(
            "SELECT count(*), count(DISTINCT (trace_id, span_id)) FROM span_rows"
        ).fetchone() == (
            640,
            640,
        )
        assert con.execute("SELECT count(*) FROM spans").fetchone() == (640,)
        assert done["files_deleted"] > 0  # the merged-away files are gone from the data path
        assert len(sorted(Path(lake.data_path).rglob("*.parquet"))) < len(parquet_before)
        # the next turn, after the interval: whoever asks first holds it (a here: b's clock is the same)
        clock.step(600)
        again = mb.run_once()
        assert again is not None and again["duplicates_deleted"]["span_rows"] == 0
        assert ma.run_once() is None
    finally:
        first.close()
        second.close()


def test_maintain_on_an_empty_lake_does_nothing_wrong(lake: Lake) -> None:
    store = LakeStore(lake.catalog, lake.data_path, extension_repository=False)
    try:
        done = maintain(store, keep_snapshots_seconds=3600)
        assert done["duplicates_deleted"] == {
            "span_rows": 0, "step_rows": 0, "step_document_rows": 0, "log_records": 0, "metric_points": 0,
        }  # fmt: skip
        assert done["data_files_before"] == done["data_files_after_merge"] == 0
    finally:
        store.close()
    assert LEASE == "lake-maintenance"
