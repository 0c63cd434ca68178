"""Statements with parts filled in when they run: ``{name}`` in a store statement stands for what a
parameter cannot be (a table's name, a column list, a sort from a fixed list). A value, a window or an
optional filter is a ``$name`` parameter instead (``tests/store/test_complete_statements.py``).

The parts are SQL written by the store itself (never user input); values always go as ``$name``
parameters. Filling is one pass: text put in is not searched again. The header is left out of what
runs (a part named in a header comment would otherwise be filled in there too).
"""

from __future__ import annotations

import re
from functools import cache

from collector.store.sqlfiles import sql

_PART = re.compile(r"\{([a-z_]+)\}")


def fill(text: str, **parts: str) -> str:
    """``text`` with each ``{name}`` given in ``parts`` replaced by its SQL (others left as they are)."""
    return _PART.sub(lambda m: parts.get(m.group(1), m.group(0)), text)


@cache
def filled(area: str, name: str, **parts: str) -> str:
    """The statement ``sql/<area>/<name>.sql`` without its header, with its parts filled in (cached: a
    table's part is one of a few names)."""
    return fill(_body(sql(area, name)), **parts)


def statement_body(area: str, name: str) -> str:
    """The statement ``sql/<area>/<name>.sql`` without its header, its parts left to ``fill`` (for a
    part that is not one of a few names, which ``filled``'s cache would keep)."""
    return _body(sql(area, name))


def _body(text: str) -> str:
    """``text`` from its first line that is not a comment (the header) on."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.strip() and not line.lstrip().startswith("--"):
            return "\n".join(lines[i:])
    return ""


@cache
def fragment(area: str, name: str) -> str:
    """A statement file that holds a fragment (a ``WHERE`` condition put in another's ``{part}``): its
    SQL without the header, after one space."""
    return " " + " ".join(line.strip() for line in _body(sql(area, name)).splitlines() if line.strip())
