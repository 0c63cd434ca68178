"""Which fields of a list of objects are a document's text, id and score, read from the list itself
(docs/architecture.md, Conventions and readers).

Every reader that meets a list of document-like objects — a convention's documents attribute, the
structural layer's document lists, a user's mapping without paths — asks this module which field is
which. The usual names come first (``TEXT_FIELDS``, ``ID_FIELDS``, ``SCORE_FIELDS``: exact where a
convention or a popular library wrote them). Where a list uses names nobody listed (a web API's
``snippet``, a store's ``uid``, ``ref`` or ``documentId``), the fields are inferred from the list as
a whole, by what their values look like across the items:

- **text**: the field that holds a string in every item, words in every item (``shape.wordy``'s
  sense: more than one word, or a script written without spaces), and the most characters in all.
  Read by shape alone (``strict``: a payload nobody said holds documents), it must also read like a
  passage — on average at least ``PASSAGE_CHARS`` characters (``PASSAGE_CHARS_CJK`` for text
  without spaces) — so that records such as ``{"id": 1, "name": "Alice Smith"}`` stay records.
- **id**: a field that holds a short identifier (a string without spaces, or an integer) in every
  item, distinct across the items, whose name says it identifies (its words include ``id``, ``uid``,
  ``key``, ``ref`` ...); failing that, in a list of two or more, the one field of that shape.
- **score**: a numeric field in every item whose name says it scores (``score``, ``similarity``,
  ``relevance``, ``distance``, ``confidence``); failing that, the one field holding a fractional
  number.

A list of search results — an id or a link with a title or a snippet, and no text field of the usual
names — is no document list here (``is_listing``): the search stages read it as results a deep-search
agent may still open (``collector.settling.search_stages``), and evidence only listed was not read.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any, NamedTuple

TEXT_FIELDS = ("page_content", "content", "text", "chunk", "passage", "body")
ID_FIELDS = ("id", "doc_id", "document_id", "chunk_id", "id_", "node_id", "uuid")
SCORE_FIELDS = ("score", "relevance_score", "similarity", "_score")
META_FIELDS = ("metadata", "meta")

# a search tool's results (``collector.settling.search_stages``): listed, not yet read
LISTING_ID_FIELDS = ("id", "doc_id", "document_id", "result_id", "docid")
LISTING_URL_FIELDS = ("url", "link", "href", "uri", "source_url")
LISTING_TITLE_FIELDS = ("title", "name", "headline")
LISTING_SNIPPET_FIELDS = ("snippet", "description", "summary", "abstract", "excerpt", "highlight")
LISTING_TEXT_FIELDS = ("content", "page_content", "text")  # a result with one of these was retrieved

_ID_SET = frozenset(ID_FIELDS)
_SCORE_SET = frozenset(SCORE_FIELDS)

PASSAGE_CHARS = 32
PASSAGE_CHARS_CJK = 12
MAX_ID_CHARS = 256
_ID_WORDS = frozenset(("id", "ids", "uid", "uuid", "guid", "key", "ref", "pk", "hash", "slug", "urn"))
_SCORE_WORDS = frozenset(("score", "similarity", "relevance", "distance", "confidence"))
_NOT_ID = frozenset((*TEXT_FIELDS, *META_FIELDS, *LISTING_URL_FIELDS))  # (a link is a listing's, not an id)
_WORDS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")


class Fields(NamedTuple):
    """The field names of one list, read first in each item (None: the usual names, item by item)."""

    text: str | None = None
    id: str | None = None
    score: str | None = None


USUAL = Fields()


def first(d: dict[str, Any], keys: Sequence[str]) -> Any:
    """The first of ``keys`` that ``d`` holds a value under (not None, not empty)."""
    for k in keys:
        v = d.get(k)
        if v is not None and v != "":
            return v
    return None


def usual_text(d: dict[str, Any]) -> str | None:
    t = first(d, TEXT_FIELDS)
    return t if isinstance(t, str) and t and not t.isspace() else None


def words_of(key: str) -> set[str]:
    """The words a key is made of (``documentId`` → document, id; ``chunk_text`` → chunk, text)."""
    return {w.lower() for w in _WORDS.findall(key)}


def _wordy(text: str) -> bool:
    s = text.strip()
    return len(s.split(None, 1)) > 1 or (not s.isascii() and len(s) >= 4)


def _head(head: dict[str, Any], keys: Sequence[str], text: bool = False) -> str | None:
    """The usual name the first item holds a field under, or None."""
    for k in keys:
        v = head.get(k)
        if v is not None and v != "" and (not text or (isinstance(v, str) and not v.isspace())):
            return k
    return None


def has_words(d: dict[str, Any]) -> bool:
    """Whether some field of ``d`` holds text of words (a passage, a title)."""
    return any(isinstance(v, str) and _wordy(v) for v in d.values())


def _shared(bodies: list[dict[str, Any]]) -> list[str]:
    """The keys every item has, in the first item's order."""
    keys = list(bodies[0])
    for b in bodies[1:]:
        keys = [k for k in keys if k in b]
    return keys


def _text_field(bodies: list[dict[str, Any]], keys: list[str], strict: bool) -> str | None:
    best, best_chars = None, 0
    for k in keys:
        values = [b[k] for b in bodies]
        if not all(isinstance(v, str) and _wordy(v) for v in values):
            continue
        chars = sum(len(v) for v in values)
        if chars > best_chars:
            best, best_chars = k, chars
    if best is None or not strict:
        return best
    texts = [b[best] for b in bodies]
    spaced = sum(1 for t in texts if " " in t.strip())
    floor = PASSAGE_CHARS if spaced * 2 >= len(texts) else PASSAGE_CHARS_CJK
    return best if best_chars / len(texts) >= floor else None


def _identifier(v: Any) -> bool:
    if isinstance(v, bool):
        return False
    if isinstance(v, int):
        return True
    return isinstance(v, str) and 0 < len(v) <= MAX_ID_CHARS and not any(c.isspace() for c in v)


def _id_field(bodies: list[dict[str, Any]], keys: list[str], taken: set[str | None]) -> str | None:
    shaped = []
    for k in keys:
        if k in taken or k in _NOT_ID:
            continue
        values = [b[k] for b in bodies]
        if not all(_identifier(v) for v in values):
            continue
        if len({str(v) for v in values}) != len(values):
            continue  # shared by two items: a kind, a source, a language, not an identity
        shaped.append(k)
    named = [k for k in shaped if words_of(k) & _ID_WORDS]
    if named:
        return named[0]
    strings = [k for k in shaped if all(isinstance(b[k], str) for b in bodies)]
    return strings[0] if len(bodies) > 1 and len(strings) == 1 else None


def _number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _score_field(bodies: list[dict[str, Any]], keys: list[str], taken: set[str | None]) -> str | None:
    numeric = [k for k in keys if k not in taken and all(_number(b[k]) for b in bodies)]
    named = [k for k in numeric if words_of(k) & _SCORE_WORDS]
    if named:
        return named[0]
    fractional = [
        k for k in numeric if any(isinstance(b[k], float) and not b[k].is_integer() for b in bodies)
    ]
    return fractional[0] if len(fractional) == 1 else None


def is_listing(bodies: list[dict[str, Any]]) -> bool:
    """Search results (``collector.settling.search_stages``): an id or a link and a title or a snippet, and no
    text under the names a retrieved document's text goes by."""
    if any(first(b, LISTING_TEXT_FIELDS) is not None for b in bodies):
        return False
    return any(
        first(b, LISTING_ID_FIELDS) is not None or first(b, LISTING_URL_FIELDS) is not None for b in bodies
    ) and any(
        first(b, LISTING_TITLE_FIELDS) is not None or first(b, LISTING_SNIPPET_FIELDS) is not None
        for b in bodies
    )


def infer(bodies: list[dict[str, Any]], strict: bool) -> Fields | None:
    """The fields of a list of objects taken to be documents (see the module doc), or None when they
    cannot be documents: some item has no text under a usual name and no field is the text of all.
    ``strict``: read by shape alone (no convention or mapping said these are documents).

    The names the first item uses are read first in every item (``text``, ``ident``, ``score`` fall
    back to the other usual names item by item): a list in the usual vocabulary costs three look-ups
    here, whatever its length; only a list that lacks a usual name is looked at whole."""
    if not bodies:
        return None
    head = bodies[0]
    text = _head(head, TEXT_FIELDS, text=True)
    ident = _head(head, ID_FIELDS)
    score = _head(head, SCORE_FIELDS)
    if text is not None and ident is not None and score is not None:
        return Fields(text, ident, score)
    keys = None
    if text is None or not all(usual_text(b) is not None for b in bodies):
        if strict and is_listing(bodies):
            return None
        keys = _shared(bodies)
        text = _text_field(bodies, keys, strict)
        if text is None:
            return None
    if ident is None and not any(
        not _ID_SET.isdisjoint(b) and first(b, ID_FIELDS) is not None for b in bodies
    ):
        keys = keys if keys is not None else _shared(bodies)
        ident = _id_field(bodies, keys, {text})
    if (
        score is None
        and any(_number(v) for v in head.values())  # (a score is a number in every item)
        and not any(not _SCORE_SET.isdisjoint(b) and first(b, SCORE_FIELDS) is not None for b in bodies)
    ):
        keys = keys if keys is not None else _shared(bodies)
        score = _score_field(bodies, keys, {text, ident})
    return Fields(text, ident, score)


_SPEAKERS = frozenset(
    ("user", "assistant", "system", "tool", "human", "ai", "model", "function", "developer")
)
# (not ``source``: a document's origin is often called so, and "user" is a usual one of a user's upload)
_SPEAKER_FIELDS = ("role", "_role", "author", "sender", "from", "speaker")
_MESSAGE_KINDS = ("Message", "Event", "_message", "_event")


def is_message_record(d: dict[str, Any]) -> bool:
    """An object that is a message of a conversation, not a document: one naming its speaker
    (``{"role": "assistant", ...}``, ``{"sender": "user", ...}``) or typed as a message or an event
    (``"type": "TextMessage"``, ``"ToolCallExecutionEvent"``), as agent runtimes relay them."""
    kind = d.get("type")
    if isinstance(kind, str) and kind.endswith(_MESSAGE_KINDS):
        return True
    for k in _SPEAKER_FIELDS:
        v = d.get(k)
        if isinstance(v, str) and v.lower() in _SPEAKERS:
            return True
    return False


def holds_structure(text: str | None) -> bool:
    """A text that is itself a JSON object or list: a wrapper of documents when what it holds is a
    document list (the callers ask), else a document whose text is JSON (a config file, a record)."""
    if not text or text.lstrip()[:1] not in ("{", "["):
        return False
    try:
        return isinstance(json.loads(text), (dict, list))
    except ValueError:
        return False


def described(bodies: list[dict[str, Any]], fields: Fields) -> bool:
    """Whether some item carries an id, a score or metadata: what tells a list of documents from a
    list of content blocks (``[{"type": "text", "text": ...}]``)."""
    if fields.id is not None or fields.score is not None:
        return True
    return any(first(b, (*ID_FIELDS, *SCORE_FIELDS, *META_FIELDS)) is not None for b in bodies)


def text(body: dict[str, Any], fields: Fields) -> str | None:
    """An item's text: under the list's name, else under a usual one."""
    if fields.text is not None:
        t = body.get(fields.text)
        if isinstance(t, str) and t and not t.isspace():
            return t
    return usual_text(body)


def _named(body: dict[str, Any], name: str | None, usual: Sequence[str]) -> Any:
    """An item's value under the list's name for a field, else under a usual one."""
    if name is not None:
        v = body.get(name)
        if v is not None and v != "":
            return v
    return first(body, usual)


def ident(body: dict[str, Any], fields: Fields) -> Any:
    return _named(body, fields.id, ID_FIELDS)


def score(body: dict[str, Any], fields: Fields) -> Any:
    return _named(body, fields.score, SCORE_FIELDS)


def metadata(body: dict[str, Any]) -> Any:
    return first(body, META_FIELDS)
