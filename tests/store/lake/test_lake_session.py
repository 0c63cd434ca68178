"""The holder's own PostgreSQL session (``collector.store.lake.session``, psycopg) against a real server
with the authentication methods a catalog is run with: SCRAM-SHA-256 (PostgreSQL's default), MD5,
trust; values come back as the server's text, a wrong password is a clear error, a statement's error
is the server's message, and the advisory lock ends with the session."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from collector.store.lake.session import Session, SessionError
from tests.pg import Postgres

PASSWORD = "s3cret 'pass'"


@pytest.fixture(scope="module")
def users(postgres: Postgres) -> Iterator[dict[str, str]]:
    """Two roles that must give a password: one by SCRAM, one by MD5 (rules put first in
    pg_hba.conf, for these roles only, and the configuration reloaded)."""
    hba = Path(postgres.root) / "data" / "pg_hba.conf"
    before = hba.read_text()
    rules = "host all h47_scram 127.0.0.1/32 scram-sha-256\nhost all h47_md5 127.0.0.1/32 md5\n"
    quoted = PASSWORD.replace("'", "''")
    postgres.query(
        "postgres",
        f"SET password_encryption = 'scram-sha-256'; CREATE ROLE h47_scram LOGIN PASSWORD '{quoted}'; "
        f"SET password_encryption = 'md5'; CREATE ROLE h47_md5 LOGIN PASSWORD '{quoted}';",
    )
    hba.write_text(rules + before)
    postgres.query("postgres", "SELECT pg_reload_conf()")
    try:
        yield {"scram": "h47_scram", "md5": "h47_md5"}
    finally:
        hba.write_text(before)
        postgres.query("postgres", "SELECT pg_reload_conf()")
        postgres.query("postgres", "DROP ROLE h47_scram; DROP ROLE h47_md5")


def _url(postgres: Postgres, user: str, password: str | None) -> str:
    from urllib.parse import quote

    auth = user if password is None else f"{user}:{quote(password, safe='')}"
    return f"postgresql://{auth}@{postgres.host}:{postgres.port}/postgres?sslmode=prefer"


@pytest.mark.parametrize("method", ["scram", "md5"])
def test_a_session_authenticates_and_holds_an_advisory_lock(
    postgres: Postgres, users: dict[str, str], method: str
) -> None:
    session = Session(_url(postgres, users[method], PASSWORD))
    try:
        assert session.query("SELECT current_user, 1 + 1, NULL::text") == [(users[method], "2", None)]
        assert session.query("SELECT pg_try_advisory_lock(4747)") == [("t",)]
        held = "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND objid = 4747 AND granted"
        assert postgres.query("postgres", held).strip() == "1"
        with pytest.raises(SessionError, match="division by zero"):
            session.query("SELECT 1 / 0")
        assert session.query("SELECT 'still usable'") == [("still usable",)]
    finally:
        session.close()
    assert postgres.query("postgres", held).strip() == "0"  # the lock ends with the session


@pytest.mark.parametrize("method", ["scram", "md5"])
def test_a_wrong_password_is_a_clear_error(postgres: Postgres, users: dict[str, str], method: str) -> None:
    with pytest.raises(SessionError, match="password authentication failed"):
        Session(_url(postgres, users[method], "wrong"))


def test_trust_needs_no_password(postgres: Postgres) -> None:
    session = Session(postgres.url("postgres"))
    try:
        assert session.query("SELECT current_user") == [(postgres.user,)]
    finally:
        session.close()
