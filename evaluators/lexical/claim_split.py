"""Claims: sentences split into clauses at clause boundaries, each split kept only when both sides
carry content; refusal and hedge clauses and questions dropped. ``is_refusal`` is an answer with a
refusal and no claim."""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from evaluators.lexical.analysis import analyze
from evaluators.lexical.chars import _CJK_RUN, _HAS_TEXT
from evaluators.lexical.refusals import _is_question, is_refusal_sentence
from evaluators.lexical.sentence_split import sentences

_EN_CLAUSE_SPLIT = re.compile(
    r"\s*(?:,\s*(?:and|but|yet|so|whereas|while)\b|;|\bbut\b|\bwhereas\b|\bhowever,)\s*", re.I
)
_EN_AND = re.compile(r"\s+and\s+", re.I)
_VERBISH = re.compile(
    r"^(?:\w+\s+){0,3}?(?:is|are|was|were|be|been|can|could|will|would|shall|should|may|might|must|has|have|had|"
    r"do|does|did|need|needs|remain|remains|expire|expires|get|gets|\w+ed|\w+s)\b",
    re.I,
)
_CN_CLAUSE_SPLIT = re.compile(r"[，,；;、]")


def _carries_content(text: str) -> bool:
    a = analyze(text)
    n = len(a.terms)
    extra = len(a.quantities) + len(a.dates) + len(a.identifiers)
    return n >= 2 or (n >= 1 and extra >= 1) or (n >= 1 and is_refusal_sentence(text))


def _merge_split(parts: list[str]) -> list[str]:
    """Merge pieces without content into their neighbour (prefer the left one)."""
    out: list[str] = []
    carry = ""
    for p in parts:
        p = p.strip()
        if not p:
            continue
        if carry:
            p = f"{carry} {p}"
            carry = ""
        if _carries_content(p):
            out.append(p)
        elif out:
            out[-1] = f"{out[-1]}, {p}" if re.search("[A-Za-z]", p) else f"{out[-1]}，{p}"
        else:
            carry = p
    if carry:
        if out:
            out[-1] = f"{out[-1]} {carry}"
        else:
            out.append(carry)
    return out


def clauses(sentence: str) -> list[str]:
    """A sentence split at clause boundaries where both sides carry content."""
    return list(_clauses(sentence))


@lru_cache(maxsize=16384)
def _clauses(sentence: str) -> tuple[str, ...]:
    if _CJK_RUN.search(sentence) and not re.search(r"[A-Za-z]{3,}\s+[A-Za-z]{3,}", sentence):
        parts = _CN_CLAUSE_SPLIT.split(sentence)
    else:
        parts = _EN_CLAUSE_SPLIT.split(sentence)
        refined: list[str] = []
        for p in parts:
            pieces = _EN_AND.split(p)
            cur = pieces[0]
            for nxt in pieces[1:]:
                if _VERBISH.match(nxt) and _carries_content(cur) and _carries_content(nxt):
                    refined.append(cur)
                    cur = nxt
                else:
                    cur = f"{cur} and {nxt}"
            refined.append(cur)
        parts = refined
    parts = [p.strip(" \t,，;；、") for p in parts]
    return tuple(_merge_split(parts) or [sentence.strip()])


@lru_cache(maxsize=1024)
def _claim_units(text: str | None) -> tuple[tuple[str, str], ...]:
    """(clause, kind) pairs: kind is claim, refusal, question or empty (cached: the claims and the
    refusal check of an answer both start here)."""
    out: list[tuple[str, str]] = []
    for s in sentences(text):
        if _is_question(s):
            out.append((s, "question"))
            continue
        for c in clauses(s):
            body = c.strip(" .。!！;；,，")
            if not body or not _HAS_TEXT.search(body):
                continue
            out.append((body, "claim"))
    return tuple(out)


def split_claims(text: str | None, extra_refusal_patterns: Sequence[str] = ()) -> list[str]:
    """The atomic claims of an answer; refusal and hedge clauses and questions are not claims."""
    if not text:
        return []
    return list(_split_claims(text, tuple(extra_refusal_patterns)))


@lru_cache(maxsize=4096)
def _split_claims(text: str, extra_refusal_patterns: tuple[str, ...]) -> tuple[str, ...]:
    out = []
    for clause, kind in _claim_units(text):
        if kind != "claim" or is_refusal_sentence(clause, extra_refusal_patterns):
            continue
        if not analyze(clause).terms and not analyze(clause).quantities and not analyze(clause).identifiers:
            continue  # "Yes." / "好的。"
        out.append(clause)
    return tuple(out)


def is_refusal(text: str | None, extra_patterns: Sequence[str] = ()) -> bool:
    """An answer made only of refusal or hedge sentences (at least one) is a refusal."""
    if not text or not text.strip():
        return False
    units = _claim_units(text)
    saw_refusal = False
    for clause, kind in units:
        if kind == "question":
            continue
        if is_refusal_sentence(clause, extra_patterns):
            saw_refusal = True
            continue
        a = analyze(clause)
        if a.terms or a.quantities or a.identifiers:
            return False
    if not saw_refusal:
        # a whole-answer check catches refusals split oddly by the clause rules
        return is_refusal_sentence(text, extra_patterns) and not split_claims(text, extra_patterns)
    return True
