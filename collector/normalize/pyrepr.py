"""Payloads written as a Python object's ``repr`` rather than JSON (docs/architecture.md, Conventions
and readers).

Some instrumentations record a value with ``str()``: a LangChain ``ToolMessage`` as ``content='...'
name='search' artifact=[Document(metadata={...}, page_content='...')]``, a dataclass as
``Passage(id='a', text='...')``. Such text holds the same structure JSON would; ``value`` reads it
into dicts and lists so that the structural rules (``collector.normalize.structural``) find the
documents and texts in it:

- a call with keyword arguments only, ``Name(k=v, ...)``, is the object ``{k: v, ...}``;
- pydantic's bare form, ``k=v k2=v2`` (fields separated by spaces), is the object too;
- an enum member, ``<ChatRole.ASSISTANT: 'assistant'>``, is its value;
- literals (strings, numbers, ``None``, ``True``, lists, tuples, dicts) are themselves: a list of
  JSON strings ``str()``-ed (``['{"record": {...}, "score": 0.4}', ...]``) is that list.

Nothing is executed: the text is parsed (``ast``), never evaluated, and anything else in it (a
name, an operator, a call with positional arguments) gives None, never a guess. A text longer than
``MAX_CHARS`` is not read.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from typing import Any

MAX_CHARS = 100_000
# what a repr starts with: ``Name(`` followed by a keyword, or a bare ``field=``
_HEAD = re.compile(r"\s*(?:[A-Za-z_][\w.]*\(\s*(?:[A-Za-z_]\w*\s*=|\))|[A-Za-z_]\w*=)")
# a literal container (``['{"id": ...}', ...]``, ``{'id': 'a'}``): a Python list or dict ``str()``-ed
_CONTAINER = re.compile(r"\s*[\[{(]\s*(?:['\"\[{(]|-?\d|None|True|False|[\]})])")


class _NotLiteral(Exception):
    """A node that is no literal and no keyword-only call."""


# what a repr may hold before it is not parsed at all: brackets and commas (each nesting level
# and each item costs the parser about a microsecond; a real tool result of 100 documents has
# ~300 brackets and ~1,000 commas in 48 KB) and, for the bare ``k=v`` form, tokens. Without them a
# crafted value of 200 KB ("X(a=((((…", "a=1+1+1…", a list of 95,000 numbers) cost 0.17-0.4 s of
# a decode worker's CPU, and compresses a thousandfold in a request; now at most ~50 ms.
MAX_ITEMS = 10_000
MAX_TOKENS = 20_000


def looks_like(text: str) -> bool:
    """Whether a text may be a repr this module reads (a cheap test before parsing)."""
    if len(text) > MAX_CHARS or (_HEAD.match(text) is None and _CONTAINER.match(text) is None):
        return False
    return text.count("(") + text.count("[") + text.count("{") + text.count(",") <= MAX_ITEMS


# an enum member's repr (``<ChatRole.ASSISTANT: 'assistant'>``): read as its value
_ENUM = re.compile(r"<[A-Za-z_][\w.]*: ('(?:[^'\\\n]|\\.)*'|\"(?:[^\"\\\n]|\\.)*\"|-?\d+(?:\.\d+)?)>")


def value(text: str) -> Any:
    """The structure a repr describes (see the module doc), or None when the text is no such repr."""
    if not looks_like(text):
        return None
    s = text.strip()
    if "<" in s:
        s = _ENUM.sub(r"\1", s)
    try:
        return _node(ast.parse(s, mode="eval").body)
    except (SyntaxError, ValueError, _NotLiteral, RecursionError, MemoryError):
        pass
    fields = _bare_fields(s)  # pydantic's ``k=v k2=v2``
    if fields is None:
        return None
    try:
        return {k: _node(ast.parse(v, mode="eval").body) for k, v in fields}
    except (SyntaxError, ValueError, _NotLiteral, RecursionError, MemoryError):
        return None


def _node(node: ast.AST) -> Any:
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, (ast.List, ast.Tuple)):
        return [_node(e) for e in node.elts]
    if isinstance(node, ast.Dict):
        if any(k is None for k in node.keys):
            raise _NotLiteral  # ``{**x}``
        return {
            str(_node(k)) if k is not None else "": _node(v)
            for k, v in zip(node.keys, node.values, strict=True)
        }
    if (
        isinstance(node, ast.Call)
        and _is_name(node.func)
        and not node.args
        and all(kw.arg for kw in node.keywords)
    ):
        return {str(kw.arg): _node(kw.value) for kw in node.keywords}
    if (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, ast.USub)
        and isinstance(node.operand, ast.Constant)
    ):
        v = node.operand.value
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return -v
    raise _NotLiteral


def _is_name(node: ast.AST) -> bool:
    """A class name, dotted or not (``Document``, ``schema.Document``): not the result of a call."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name)


def _bare_fields(s: str) -> list[tuple[str, str]] | None:
    """``k=v k2=v2`` split into (key, value text) pairs at the top level, or None."""
    tokens: list[tokenize.TokenInfo] = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(s).readline):
            tokens.append(tok)
            if len(tokens) > MAX_TOKENS:
                return None
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return None
    lines = s.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))

    def offset(pos: tuple[int, int]) -> int:
        return starts[pos[0] - 1] + pos[1]

    pairs: list[tuple[str, int]] = []  # (key, offset where its value starts)
    depth = 0
    for i, tok in enumerate(tokens):
        if tok.type == tokenize.OP and tok.string in "([{":
            depth += 1
        elif tok.type == tokenize.OP and tok.string in ")]}":
            depth -= 1
        elif depth == 0 and tok.type == tokenize.NAME and i + 1 < len(tokens) and tokens[i + 1].string == "=":
            pairs.append((tok.string, offset(tokens[i + 1].end)))
    if not pairs or offset(tokens[0].start) != pairs[0][1] - len(pairs[0][0]) - 1:
        return None
    out = []
    for n, (key, begin) in enumerate(pairs):
        end = pairs[n + 1][1] - len(pairs[n + 1][0]) - 1 if n + 1 < len(pairs) else len(s)
        out.append((key, s[begin:end].strip()))
    return out
