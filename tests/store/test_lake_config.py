"""The lake's settings: the catalog URL, ``[store]`` in the config file, the flags of ``serve``."""

from __future__ import annotations

from pathlib import Path

import pytest

from collector.config import build_settings
from collector.store.lake.attach import catalog_conninfo, redact
from ragfault.cli import main
from ragfault_core.errors import ConfigError


def test_a_catalog_url_becomes_a_libpq_connection_string() -> None:
    assert catalog_conninfo("postgresql://ragfault@db.internal:5433/lake") == (
        "host=db.internal dbname=lake port=5433 user=ragfault"
    )
    assert catalog_conninfo("postgres://u:p%20w'x@127.0.0.1/l?sslmode=require") == (
        "host=127.0.0.1 dbname=l user=u password='p w\\'x' sslmode=require"
    )


@pytest.mark.parametrize(
    "url", ["mysql://u@h/db", "postgresql://u@h", "postgresql:///db", "postgresql://u@h:99999/db", "lake.db"]
)
def test_anything_else_is_refused_with_the_expected_form(url: str) -> None:
    with pytest.raises(ConfigError, match="postgresql://USER@HOST:PORT/DB|catalog"):
        catalog_conninfo(url)


def test_passwords_stay_out_of_messages() -> None:
    assert redact("postgresql://u:secret@h:1/db") == "postgresql://u:***@h:1/db"
    assert redact("postgresql://u@h:1/db") == "postgresql://u@h:1/db"


def test_the_store_table_of_the_config_file(tmp_path: Path) -> None:
    config = tmp_path / "ragfault.toml"
    config.write_text(
        '[store]\nbackend = "ducklake"\ncatalog = "postgresql://u@h:5432/lake"\ndata_path = "/srv/lake"\n'
        'extension_dir = "/opt/ext"\nextension_repository = false\nclaim_max_traces = 50\n'
    )
    s = build_settings(config)
    assert (s.store, s.catalog, s.data_path, s.extension_dir, s.extension_repository) == (
        "ducklake", "postgresql://u@h:5432/lake", "/srv/lake", "/opt/ext", False,
    )  # fmt: skip
    assert s.lake_claim_max_traces == 50
    assert build_settings(config, {"store": "duckdb"}).store == "duckdb"  # a flag wins
    config.write_text('[store]\nbackend = "ducklake"\ncatalogue = "x"\n')
    with pytest.raises(ConfigError, match="unknown \\[store\\] keys: catalogue"):
        build_settings(config)


def test_a_lake_needs_its_catalog_and_data_path(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "--store", "ducklake", "--data-path", "/tmp/x"]) == 2
    assert "store ducklake needs catalog and data_path" in capsys.readouterr().err
    with pytest.raises(ConfigError, match="duckdb"):
        build_settings(None, {"store": "sqlite"})
