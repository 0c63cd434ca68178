"""Retention on a lake, in one collector at a time.

Deleting a trace's rows from the lake's tables in two collectors at once would make DuckLake roll
one of them back (two deletes from one table conflict), and both would export the same traces
first. So every lake collector with ``[retention] enabled`` asks, each ``interval_seconds``, for the
``lake-retention`` lease in the catalog (``collector.store.lease``, as maintenance does); the holder
runs the round (``collector.maintenance.retention.apply_retention``, whose store operations take the lake's
paths). A collector killed while holding it leaves it to expire: another runs the next round.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from collector.components import Component, Context
from collector.maintenance.retention import RetentionService, router

LEASE = "lake-retention"


class LakeRetentionService(RetentionService):
    """``RetentionService`` that runs a round only while this collector holds the lease."""

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        self.leases: Any = None

    def start(self) -> None:
        if self.settings.enabled:
            from collector.store.lease import CatalogLeases

            settings = self.ctx.settings
            assert settings.catalog  # a lake's settings name it (checked by ServerSettings)
            self.leases = CatalogLeases(
                settings.catalog,
                extension_repository=settings.extension_repository,
                extension_dir=settings.extension_dir,
            )
        super().start()

    def run_once(self, now: datetime | None = None) -> dict[str, int]:
        """One round when this collector holds the lease for the interval; else nothing ({})."""
        if self.leases is not None and not self.leases.claim(LEASE, self.settings.interval_seconds):
            return {}
        return super().run_once(now)

    def stop(self) -> None:
        super().stop()
        if self.leases is not None:
            self.leases.close()


COMPONENT = Component(
    "lake_retention", table="retention", service=LakeRetentionService, routers=(router,),
    stores=frozenset({"ducklake"}), order=10,
)  # fmt: skip
