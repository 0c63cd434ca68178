"""Conflict samples (docs/architecture.md, Experiments): does the system follow a stale version of a document?

``plant`` copies each evidence document of the chosen answerable cases (policy cases first) with
its key numbers changed and an earlier validity, superseded by the original, and returns the new
knowledge base, the chosen cases (the stale copies added to their ``negative_doc_ids``) and a
manifest of the planted stale values. Run the system on a knowledge base with the copies indexed;
the ``follows_stale`` evaluator says, per trace, whether the answer states a value only a stale
version holds, and ``case_rows`` / the bundled ``follows_stale`` query sum it up per run.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from evaluators.gold import AnyOf, Evidence, GoldCase, KBDocument
from queries import load_query
from ragfault.compare import QueryFn, rows_of

# A number written with digits; four-digit years (1900-2099) and version-like dotted runs are kept.
_NUMBER = re.compile(r"(?<![\d.])\d+(?:\.\d+)?(?![\d.])")
_YEAR = re.compile(r"(?:19|20)\d\d")
STALE_SUFFIX = "-stale"


@dataclass(frozen=True)
class Planted:
    doc_id: str
    stale_doc_id: str
    case_ids: tuple[str, ...]
    values: tuple[tuple[str, str], ...]  # (current, stale)

    def manifest_row(self) -> dict[str, Any]:
        return {
            "stale_doc_id": self.stale_doc_id, "doc_id": self.doc_id, "case_ids": list(self.case_ids),
            "values": [{"current": c, "stale": s} for c, s in self.values],
        }  # fmt: skip


def _evidence_doc_ids(case: GoldCase) -> list[str]:
    out: list[str] = []
    for item in case.evidence:
        for ev in item.any_of if isinstance(item, AnyOf) else [item]:
            if isinstance(ev, Evidence) and ev.doc_id and ev.doc_id not in out:
                out.append(ev.doc_id)
    return out


def _quote_span(case_quotes: list[str], content: str) -> str:
    """The text whose numbers are the key ones: the evidence quotes found in the document, else it all."""
    found = [q for q in case_quotes if q and q in content and _NUMBER.search(q)]
    return " ".join(found) if found else content


def _key_numbers(text: str) -> list[str]:
    return list(dict.fromkeys(m.group(0) for m in _NUMBER.finditer(text) if not _YEAR.fullmatch(m.group(0))))


def _changed(value: str, taken: set[str], rng: random.Random) -> str:
    """Another value of the same kind (integer or decimal), not among ``taken``."""
    if "." in value:
        v = float(value)
        places = len(value.split(".")[1])
        options = [f"{v * f:.{places}f}" for f in (2, 3, 0.5, 1.5)]
    else:
        v = int(value)
        options = [str(x) for x in (v * 2, v * 3, v + max(1, v // 2), v + 7, v + 1) if x != v and x > 0]
    rng.shuffle(options)
    for o in options:
        if o not in taken and o != value:
            return o
    return str(int(float(value)) + 1000)


def _plant_doc(
    doc: KBDocument, quotes: list[str], taken_ids: set[str], rng: random.Random
) -> tuple[KBDocument, tuple[tuple[str, str], ...]] | None:
    content = doc.content or ""
    keys = _key_numbers(_quote_span(quotes, content))
    if not keys:
        return None
    taken = set(_key_numbers(content))
    values: list[tuple[str, str]] = []
    for k in keys:
        new = _changed(k, taken, rng)
        taken.add(new)
        values.append((k, new))
    mapping = dict(values)
    stale_content = _NUMBER.sub(lambda m: mapping.get(m.group(0), m.group(0)), content)
    stale_id = doc.doc_id + STALE_SUFFIX
    n = 2
    while stale_id in taken_ids:
        stale_id, n = f"{doc.doc_id}{STALE_SUFFIX}-{n}", n + 1
    taken_ids.add(stale_id)
    valid_to = doc.valid_from
    valid_from = valid_to - timedelta(days=365) if valid_to is not None else None
    stale = KBDocument(
        doc_id=stale_id,
        version=f"{doc.version}{STALE_SUFFIX}" if doc.version else STALE_SUFFIX.lstrip("-"),
        valid_from=valid_from,
        valid_to=valid_to,
        superseded_by=doc.doc_id,
        acl=doc.acl,
        title=doc.title,
        content=stale_content,
        metadata={**(doc.metadata or {}), "conflict_of": doc.doc_id},
    )
    return stale, tuple(values)


def _is_policy(case: GoldCase) -> bool:
    return "policy" in (case.category or "").lower()


def plant(
    kb: list[KBDocument], gold: list[GoldCase], *, cases: int | None = None, seed: int = 0
) -> tuple[list[KBDocument], list[GoldCase], list[Planted]]:
    """The knowledge base with stale copies, the chosen cases, and what was planted."""
    rng = random.Random(seed)
    by_id = {d.doc_id: d for d in kb}
    eligible = [c for c in gold if c.answerable and c.expected_behavior == "answer"
                and any(_key_numbers(by_id[d].content or "") for d in _evidence_doc_ids(c) if d in by_id)]  # fmt: skip
    policy = [c for c in eligible if _is_policy(c)]
    rest = [c for c in eligible if not _is_policy(c)]
    rng.shuffle(policy)
    rng.shuffle(rest)
    chosen = (policy + rest)[: cases if cases is not None else None]
    taken_ids = set(by_id)
    planted: dict[str, Planted] = {}
    stale_docs: list[KBDocument] = []
    out_cases: list[GoldCase] = []
    for case in chosen:
        quotes = [ev.quote for item in case.evidence for ev in (item.any_of if isinstance(item, AnyOf) else [item])
                  if isinstance(ev, Evidence) and ev.quote]  # fmt: skip
        stale_ids: list[str] = []
        for doc_id in _evidence_doc_ids(case):
            if doc_id not in by_id:
                continue
            if doc_id in planted:
                p = planted[doc_id]
                planted[doc_id] = Planted(p.doc_id, p.stale_doc_id, (*p.case_ids, case.case_id), p.values)
                stale_ids.append(p.stale_doc_id)
                continue
            made = _plant_doc(by_id[doc_id], quotes, taken_ids, rng)
            if made is None:
                continue
            stale, values = made
            stale_docs.append(stale)
            planted[doc_id] = Planted(doc_id, stale.doc_id, (case.case_id,), values)
            stale_ids.append(stale.doc_id)
        negatives = list(dict.fromkeys([*case.negative_doc_ids, *stale_ids]))
        out_cases.append(case.model_copy(update={"negative_doc_ids": negatives}))
    return [*kb, *stale_docs], out_cases, list(planted.values())


# --- over a run ------------------------------------------------------------------------------------


def case_rows(run: QueryFn, run_id: str | None) -> list[dict[str, Any]]:
    """The latest ``follows_stale`` verdict per case of the run (bundled query ``follows_stale``)."""
    q = load_query("follows_stale")
    return rows_of(run(q.sql, q.bind({"run_id": run_id})))


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Per run: cases with a stale version, how many retrieved one, kept it out of the context, let
    it reach the context, and the follows-stale rate among those it reached (None when none did)."""
    out: dict[str, dict[str, Any]] = {}
    for r in rows:
        s = out.setdefault(str(r["run_id"]), {"run_id": r["run_id"], "cases": 0, "stale_retrieved": 0,
                                              "kept_out": 0, "stale_in_context": 0, "followed": 0,
                                              "followed_cases": []})  # fmt: skip
        s["cases"] += 1
        s["stale_retrieved"] += bool(r["stale_retrieved"])
        s["kept_out"] += bool(r["stale_retrieved"] and not r["stale_in_context"])
        if r["stale_in_context"]:
            s["stale_in_context"] += 1
            if r["follows_stale"]:
                s["followed"] += 1
                s["followed_cases"].append(r["case_id"])
    for s in out.values():
        s["follows_stale_rate"] = s["followed"] / s["stale_in_context"] if s["stale_in_context"] else None
    return {"runs": list(out.values())}
