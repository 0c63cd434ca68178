"""Loading the ducklake and postgres extensions without network: a repository (here a local one,
laid out as DuckDB's), the installed PyPI packages, a local directory, and the one-line error when
none has them."""

from __future__ import annotations

import shutil
from pathlib import Path

import duckdb
import pytest

from collector.store.lake.attach import EXTENSIONS, load_extensions, package_file
from ragfault_core.errors import ConfigError


def instance(tmp_path: Path) -> duckdb.DuckDBPyConnection:
    """A fresh instance (extensions load per instance) installing into its own directory."""
    return duckdb.connect(
        config={
            "extension_directory": str(tmp_path / "installed"),
            "autoinstall_known_extensions": False,
            "autoload_known_extensions": False,
        }
    )


def loaded(con: duckdb.DuckDBPyConnection) -> dict[str, bool]:
    rows = con.execute("SELECT extension_name, loaded FROM duckdb_extensions()").fetchall()
    return {name: bool(flag) for name, flag in rows if name in {n for _, n in EXTENSIONS}}


def copy_files(directory: Path) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    for package, name in EXTENSIONS:
        found = package_file(package, name)
        assert found is not None
        shutil.copy(found, directory / found.name)


def test_a_repository_that_answers_is_used_first(tmp_path: Path) -> None:
    con = instance(tmp_path)
    platform = con.execute("PRAGMA platform").fetchone()[0]  # type: ignore[index]
    repo = tmp_path / "repo"
    copy_files(repo / f"v{duckdb.__version__}" / platform)
    origin = load_extensions(con, repository=str(repo), packages=True)
    assert origin == {"postgres_scanner": f"repository {repo}", "ducklake": f"repository {repo}"}
    assert loaded(con) == {"postgres_scanner": True, "ducklake": True}
    # INSTALL put them in the instance's extension directory
    assert sorted(p.name for p in (tmp_path / "installed").rglob("*.duckdb_extension")) == [
        "ducklake.duckdb_extension",
        "postgres_scanner.duckdb_extension",
    ]


def test_without_a_repository_the_installed_packages_are_loaded(tmp_path: Path) -> None:
    con = instance(tmp_path)
    origin = load_extensions(con, repository=str(tmp_path / "no-repo"), packages=True)
    for package, name in EXTENSIONS:
        assert origin[name] == str(package_file(package, name))
        assert f"{package}/extensions/v{duckdb.__version__}/" in origin[name]
    assert loaded(con) == {"postgres_scanner": True, "ducklake": True}
    # and the lake's ATTACH works with what was loaded
    con.execute(f"ATTACH 'ducklake:{tmp_path / 'meta.ducklake'}' AS l (DATA_PATH '{tmp_path / 'files'}/')")
    con.execute("CREATE TABLE l.t AS SELECT 1 AS x")
    assert con.execute("SELECT x FROM l.t").fetchall() == [(1,)]


@pytest.mark.parametrize("layout", ["flat", "duckdb"])
def test_a_local_directory_is_the_last_resort(tmp_path: Path, layout: str) -> None:
    con = instance(tmp_path)
    directory = tmp_path / "ext"
    if layout == "flat":
        copy_files(directory)
    else:
        platform = con.execute("PRAGMA platform").fetchone()[0]  # type: ignore[index]
        copy_files(directory / f"v{duckdb.__version__}" / platform)
    origin = load_extensions(con, repository=False, packages=False, directory=directory)
    assert all(Path(path).is_relative_to(directory) for path in origin.values())
    assert loaded(con) == {"postgres_scanner": True, "ducklake": True}


def test_when_nothing_has_them_one_line_names_every_place_tried(tmp_path: Path) -> None:
    con = instance(tmp_path)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ConfigError) as caught:
        load_extensions(con, repository=str(tmp_path / "no-repo"), packages=False, directory=empty)
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(
        f"cannot load the DuckDB extension postgres_scanner for DuckDB {duckdb.__version__}"
    )
    assert f"repository {tmp_path / 'no-repo'} (" in message
    assert f"directory {empty} (no postgres_scanner.duckdb_extension" in message
    assert loaded(con).get("postgres_scanner") is not True


def test_a_file_that_is_not_an_extension_is_reported_with_its_path(tmp_path: Path) -> None:
    con = instance(tmp_path)
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "postgres_scanner.duckdb_extension").write_bytes(b"not an extension")
    with pytest.raises(ConfigError) as caught:
        load_extensions(con, repository=False, packages=False, directory=bad)
    assert str(bad / "postgres_scanner.duckdb_extension") in str(caught.value)
    assert "\n" not in str(caught.value)
