"""The lake's maintenance, in one collector at a time, on a schedule.

Each lake commit adds small Parquet files (one per table it touches) and a snapshot; a span two
collectors both committed stays twice in the raw tables. Every ``interval`` seconds each lake
collector asks for the ``lake-maintenance`` lease (``collector/store/lease.py``) for that interval;
the one that gets it — one per interval across all collectors — runs, in order:

1. ``compact_duplicates``: the second and later copies of each span are deleted from the raw tables;
2. ``ducklake_flush_inlined_data`` (rows of small commits that DuckLake kept in the catalog are
   written to data files), then ``ducklake_merge_adjacent_files``: small data files of a table are
   rewritten as larger ones;
3. ``ducklake_expire_snapshots``: snapshots older than ``keep_snapshots`` seconds are dropped (time
   travel reaches back that far);
4. ``ducklake_cleanup_old_files``: data files no snapshot needs any more, older than that, are deleted.

A collector that holds the lease runs again an interval later; one that did not get it asks again
every ``recheck_seconds`` (a claim that changes nothing while the holder lives), so when the holder
is killed (mid-run, or holding its interval) its lease is free at once (``lake.holders``: its
presence ends with its process) and a survivor takes it and runs within seconds.
A step that conflicts with a concurrent ingest commit is rolled back (DuckLake decides between the
two) and runs again at the next interval; nothing is lost either way.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from collector.components import Component, Context
from collector.store.lake.store import LakeStore
from collector.store.lease import CatalogLeases
from collector.store.sqlfiles import sql

AREA = "maintenance"  # (its statements name the lake as it is attached: lake.LAKE)

log = logging.getLogger("ragfault.lake")

LEASE = "lake-maintenance"


def maintain(store: LakeStore, keep_snapshots_seconds: float) -> dict[str, Any]:
    """Run the steps once on ``store``'s lake; returns what each did (counts, seconds)."""
    done: dict[str, Any] = {}
    t0 = time.perf_counter()
    done["duplicates_deleted"] = store.compact_duplicates()
    con = store.cursor()
    try:
        keep = {"keep": float(keep_snapshots_seconds)}
        # small commits are kept in the catalog itself (DuckLake's inlining): written out as files first
        done["inlined_rows_flushed"] = _count(con, "flush_inlined")
        files_before = _data_files(con)
        con.execute(sql(AREA, "merge_files"))
        done["data_files_before"], done["data_files_after_merge"] = files_before, _data_files(con)
        done["snapshots_expired"] = _count(con, "expire_snapshots", keep)
        done["files_deleted"] = _count(con, "cleanup_files", keep)
    finally:
        con.close()
    done["seconds"] = round(time.perf_counter() - t0, 3)
    return done


def _count(con: Any, name: str, params: dict[str, Any] | None = None) -> int:
    row = con.execute(sql(AREA, name), params).fetchone()
    return int(row[0]) if row else 0


def _data_files(con: Any) -> int:
    """Data files of the current snapshot, over every table of the lake."""
    tables = [r[0] for r in con.execute(sql(AREA, "lake_tables")).fetchall()]
    return sum(_count(con, "data_files", {"table": t}) for t in tables)


RECHECK_SECONDS = 2.0  # how often a collector without the lease asks for it again


class Maintainer:
    """Every ``interval`` seconds while it holds the lease, every ``recheck_seconds`` while another
    collector does: claim the lease; when this process got it, ``maintain``. ``wait(event,
    seconds)`` is the loop's pause (true once stopped): tests drive it with their clock."""

    def __init__(
        self,
        store: LakeStore,
        leases: CatalogLeases,
        *,
        interval_seconds: float,
        keep_snapshots_seconds: float,
        run: Callable[[LakeStore, float], dict[str, Any]] = maintain,
        recheck_seconds: float = RECHECK_SECONDS,
        wait: Callable[[threading.Event, float], bool] | None = None,
    ) -> None:
        if interval_seconds <= 0 or recheck_seconds <= 0:
            raise ValueError("the maintenance interval is a positive number of seconds")
        self.store, self.leases = store, leases
        self.interval = interval_seconds
        self.recheck = min(recheck_seconds, interval_seconds)
        self.keep = keep_snapshots_seconds
        self._run = run
        self._wait = wait or (lambda event, seconds: event.wait(seconds))
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.last: dict[str, Any] | None = None
        self.runs = 0

    def run_once(self) -> dict[str, Any] | None:
        """One turn: the maintenance's result when this process held the lease, else None."""
        if not self.leases.claim(LEASE, self.interval):
            return None
        self.last = self._run(self.store, self.keep)
        self.runs += 1
        log.info("lake maintenance by %s: %s", self.leases.holder, self.last)
        return self.last

    def _loop(self) -> None:
        wait = self.interval
        while not self._wait(self._stop, wait):
            try:
                wait = self.interval if self.run_once() is not None else self.recheck
            except Exception as exc:  # a conflict with an ingest commit, the catalog away: next turn
                wait = self.interval
                log.warning("lake maintenance did not complete (next try in %.0f s): %s", self.interval, exc)

    def start(self) -> None:
        self._thread = threading.Thread(target=self._loop, name="ragfault-lake-maintenance", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(30)
        self.leases.close()


def maintainer(ctx: Context) -> Maintainer | None:
    """The lake's maintenance in a server: every lake collector asks for the lease, the holder
    runs it; none when ``[server] lake_maintenance_seconds`` is 0 (another process maintains the
    lake) or the store is not a lake."""
    settings, store = ctx.settings, ctx.store
    if settings.lake_maintenance_seconds <= 0 or not isinstance(store, LakeStore):
        return None
    assert settings.catalog  # a lake's settings name it (checked by ServerSettings)
    leases = CatalogLeases(
        settings.catalog,
        extension_repository=settings.extension_repository,
        extension_dir=settings.extension_dir,
    )
    return Maintainer(
        store,
        leases,
        interval_seconds=settings.lake_maintenance_seconds,
        keep_snapshots_seconds=settings.lake_keep_snapshots_seconds,
    )


# right after the core, beside the settler; its settings are [server]'s (lake_maintenance_seconds,
# lake_keep_snapshots_seconds)
COMPONENT = Component("lake_maintenance", service=maintainer, stores=frozenset({"ducklake"}), order=2)
