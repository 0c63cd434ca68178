"""One plain PostgreSQL session of this process's own, for the lake holders' advisory locks.

The postgres extension of DuckDB pools its connections and resets each one (``DISCARD ALL``) when it
goes back to the pool, which drops every session-level advisory lock: a lock that must live exactly
as long as the process needs a connection nobody else uses or resets. This is that connection, made
with psycopg (the ``lake`` extra), which speaks PostgreSQL's protocol with everything a catalog may
ask of a client (TLS, SCRAM, a password file, a service file). Results are read as the server's text
(no type is converted: the holders compare the text of a boolean, ``t``). A session that cannot be
opened is a ``SessionError``, and the holder then falls back on the expiry of its claims
(``holders``).
"""

from __future__ import annotations

from typing import Any

TIMEOUT_SECONDS = 10.0


class SessionError(Exception):
    """The session could not be opened, or a statement failed (the server's message)."""


class Session:
    """A connection to the database of a ``postgresql://`` URL (or a libpq connection string);
    ``query`` runs one statement, in autocommit."""

    def __init__(self, url: str, *, timeout: float = TIMEOUT_SECONDS) -> None:
        try:
            import psycopg
            from psycopg.adapt import AdaptersMap
            from psycopg.types.string import TextLoader
        except ImportError as exc:  # the lake extra not installed
            raise SessionError(f"psycopg is not installed (pip install 'ragfault[lake]'): {exc}") from exc
        self._errors: tuple[type[BaseException], ...] = (psycopg.Error,)
        # no loader but the text one, for "any type" (oid 0): every value comes back as its text
        text_only = AdaptersMap()
        text_only.register_loader(0, TextLoader)
        try:
            self._conn: Any = psycopg.connect(
                url,
                autocommit=True,
                connect_timeout=max(1, int(timeout)),
                # keep-alives, so a catalog that went away is noticed by the next beat
                keepalives=1,
                keepalives_idle=30,
                context=text_only,
            )
        except psycopg.Error as exc:
            raise SessionError(_message(exc)) from exc

    def query(self, sql: str) -> list[tuple[str | None, ...]]:
        """Run ``sql`` (one statement); its rows, each value as the server's text (None: NULL)."""
        try:
            cur = self._conn.execute(sql)
            rows = cur.fetchall() if cur.description is not None else []
        except self._errors as exc:
            raise SessionError(_message(exc)) from exc
        return [tuple(None if v is None else str(v) for v in row) for row in rows]

    def close(self) -> None:
        try:
            self._conn.close()
        except self._errors:
            pass


def _message(exc: BaseException) -> str:
    """The server's (or libpq's) message of ``exc``, with its SQLSTATE when there is one."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    code = getattr(exc, "sqlstate", None)
    return f"{text} ({code})" if code else text
