"""Collectors that start at the same moment on a new catalog all come up: every table and catalog
object of the lake is made idempotently (``collector.store.lake.ddl``), in the catalog's PostgreSQL
(the leases, the claims, the holders) and in the lake itself."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from collector.store import lease
from collector.store.lake import claims as lake_claims
from collector.store.lake import holders as lake_holders
from collector.store.lease import CatalogLeases
from tests.pg import Postgres
from tests.store.conftest import Lake
from tests.store.lake.test_two_collectors import Collector
from tests.waiting import wait_until

COLLECTORS = 4


def _opened_while_another_session_makes(
    postgres: Postgres, lake: Lake, create: str, table: str, open_: Callable[[], object]
) -> object:
    """``open_()`` run while another session holds ``create`` uncommitted; that session commits once
    the opener waits on it (the moment two collectors make the table at once). Returns what
    ``open_`` returned or raised."""
    db = lake.catalog.rsplit("/", 1)[1]
    opened: list[object] = []
    with postgres.session(db) as other:
        assert other.stdin is not None and other.stdout is not None
        other.stdin.write(f"BEGIN;\n{create};\n\\echo created\n")
        assert other.stdout.readline().strip() == "created"

        def run() -> None:
            try:
                opened.append(open_())
            except BaseException as exc:
                opened.append(exc)

        thread = threading.Thread(target=run)
        thread.start()
        waiting = (
            "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
            "AND datname = current_database()"
        )
        # (sessions waiting on a lock) until the create waits on the other session, or has ended
        wait_until(lambda: postgres.query(db, waiting).strip(), lambda n: n == "1" or not thread.is_alive(),
                   what=f"the create of {table} to wait on the other session", timeout=60)  # fmt: skip
        other.stdin.write("COMMIT;\n")
        other.stdin.flush()
        thread.join(60)
    assert len(opened) == 1
    return opened[0]


@pytest.mark.parametrize(
    ("create", "table"),
    [(lease._CREATE, lease.TABLE), (lake_holders._CREATE, lake_holders.TABLE)],
    ids=["leases", "holders"],
)
def test_leases_open_while_another_collector_makes_their_table(
    lake: Lake, postgres: Postgres, create: str, table: str
) -> None:
    """The crash of issue 47: ``CREATE TABLE IF NOT EXISTS ragfault_lease`` failing on
    ``pg_type_typname_nsp_index`` when another collector made the table meanwhile."""
    leases = _opened_while_another_session_makes(
        postgres, lake, create, table, lambda: CatalogLeases(lake.catalog, extension_repository=False)
    )
    assert isinstance(leases, CatalogLeases), leases
    try:
        assert leases.claim("lake-maintenance", 30)
        assert leases.state("lake-maintenance") is not None
    finally:
        leases.close()


def test_four_collectors_start_at_once_on_a_new_catalog(
    lake: Lake, postgres: Postgres, tmp_path: Path
) -> None:
    started = [
        Collector(lake, tmp_path / f"collector{i}.log", {"RAGFAULT_LAKE_MAINTENANCE_SECONDS": "600"})
        for i in range(COLLECTORS)
    ]  # (at once: each process makes the catalog, the lake's tables, the claims, holders and leases)
    try:
        for c in started:
            c.wait_ready()
        for c in started:
            assert c.sql("SELECT count(*) FROM traces") == [[0]]
            assert c.sql("SELECT count(*) FROM trace_claims") == [[0]]
        # each is a live holder twice: its store's claims and its maintenance lease
        db = lake.catalog.rsplit("/", 1)[1]
        alive = postgres.query(
            db, f"SELECT count(*) FROM {lake_holders.TABLE} h WHERE {lake_holders.locked_sql('h.lock_key')}"
        )
        assert int(alive) == 2 * COLLECTORS
        assert postgres.query(db, f"SELECT count(*) FROM {lake_claims.TABLE}").strip() == "0"
    finally:
        for c in started:
            c.stop()
