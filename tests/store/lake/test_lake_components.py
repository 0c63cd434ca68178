"""A lake collector's components: the lake's maintenance runs as one, right after the settler,
and not at all with ``[server] lake_maintenance_seconds = 0`` (another process maintains the lake)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from collector.settling.settle import Settler
from collector.store.maintenance import Maintainer
from tests.conftest import Server, make_settings
from tests.store.conftest import Lake


@contextmanager
def on_lake(lake: Lake, tmp_path: Path, maintenance_seconds: float) -> Iterator[Server]:
    srv = Server(
        make_settings(
            tmp_path, store="ducklake", catalog=lake.catalog, data_path=str(lake.data_path),
            extension_repository=False, lake_maintenance_seconds=maintenance_seconds,
        )
    )  # fmt: skip
    try:
        yield srv
    finally:
        srv.stop()


def test_a_lake_collector_runs_its_maintenance_after_the_settler(lake: Lake, tmp_path: Path) -> None:
    with on_lake(lake, tmp_path, 900) as srv:
        rt = srv.runtime
        names = [c.name for c in rt.components]
        assert names[:3] == ["settler", "lake_maintenance", "lake_retention"] and "retention" not in names
        assert [type(s) for s in rt.extensions][:2] == [Settler, Maintainer]
        maintainer = rt.find(Maintainer)
        assert maintainer is not None and maintainer.interval == 900
        assert maintainer._thread is not None and maintainer._thread.is_alive()
    assert not maintainer._thread.is_alive()  # stopped with the server


def test_no_maintenance_with_an_interval_of_zero(lake: Lake, tmp_path: Path) -> None:
    with on_lake(lake, tmp_path, 0) as srv:
        rt = srv.runtime
        assert "lake_maintenance" in [c.name for c in rt.components]  # listed, with nothing to run
        assert rt.find(Maintainer) is None and rt.settler is not None
