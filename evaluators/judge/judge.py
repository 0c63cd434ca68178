"""The judge as evaluators see it: four tasks over text, cached, with validated JSON answers.

``Judge`` is what the runner hands to judge-tier evaluators through ``EvalInput.judge``. Each task
renders a versioned prompt file (``evaluators/prompts/<task>_<version>.txt``), looks its answer up in
the cache by (task input, context hash, judge model, prompt version), and only on a miss asks the
client. Sentence ids in the answer (``S3``) are resolved back to the sentence text and its document.
"""

from __future__ import annotations

import hashlib
import json
import re
import string
import threading
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from collector.store import judging
from collector.store.base import Tx
from evaluators.judge.client import JudgeClient, JudgeSkipped
from evaluators.judge.settings import JudgeSettings

PROMPTS = Path(__file__).resolve().parent.parent / "prompts"

Verdict = Literal["supported", "contradicted", "unsupported"]


# --- output schemas (what the model must return) ------------------------------------------------


class _Out(BaseModel):
    model_config = ConfigDict(extra="ignore")


class ClaimOut(_Out):
    text: str = Field(..., min_length=1)
    verdict: Verdict
    sentence: str | None = None


class ClaimsOut(_Out):
    claims: list[ClaimOut]


class FactOut(_Out):
    id: str
    verdict: Verdict
    sentence: str | None = None


class FactsOut(_Out):
    facts: list[FactOut]


class CitationOut(_Out):
    verdict: Verdict
    sentence: str | None = None


class RefusalOut(_Out):
    label: Literal["refused", "answered", "clarify"]
    reason: str | None = None


# --- results (what evaluators read) -------------------------------------------------------------


@dataclass(frozen=True)
class Sentence:
    text: str
    doc_id: str | None = None


@dataclass(frozen=True)
class ItemVerdict:
    """A claim, fact or cited sentence and its verdict; ``evidence`` is the deciding sentence."""

    text: str
    verdict: Verdict
    evidence: str | None = None
    evidence_doc: str | None = None
    item_id: str | None = None

    def as_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"claim": self.text, "label": self.verdict}
        if self.item_id is not None:
            d["id"] = self.item_id
        if self.evidence is not None:
            d["evidence"] = self.evidence
            d["evidence_doc"] = self.evidence_doc
        return d


_SPLIT = re.compile(r"(?<=[。！？；!?;])|(?<=[.])\s+(?=\S)|\n+")


def split_sentences(text: str) -> list[str]:
    """Sentences of a text, English and Chinese, by the lexical module's splitter."""
    from evaluators.lexical import sentences

    try:
        return [s for s in sentences(text) if s.strip()]
    except Exception:  # a bug there must not stop the judge
        return [s.strip() for s in _SPLIT.split(text or "") if s and s.strip()]


def _sha(value: Any) -> str:
    raw = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)
    return hashlib.sha256(raw.encode()).hexdigest()


def load_prompt(task: str, version: str) -> tuple[str, str]:
    """(system, user template) of a prompt file; the two parts are split by a ``=== user ===`` line."""
    # ``evaluators`` is a namespace package: locate the prompts beside this package, not via resources.
    path = PROMPTS / f"{task}_{version}.txt"
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        from ragfault_core.errors import ConfigError

        raise ConfigError(
            f"no prompt file prompts/{task}_{version}.txt for judge prompt_version {version}"
        ) from exc
    system, _, user = text.partition("=== user ===")
    return system.strip(), user.strip()


class JudgeCache:
    """Answers by key: in memory, then in DuckDB (``judge_cache``); new answers wait in ``pending``."""

    def __init__(self, cursor: Tx | None = None) -> None:
        self.cursor = cursor
        self.mem: dict[str, dict[str, Any]] = {}
        self.pending: list[tuple[Any, ...]] = []
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def get(self, key: str) -> dict[str, Any] | None:
        with self._lock:
            if key in self.mem:
                self.hits += 1
                return self.mem[key]
            if self.cursor is not None:
                found = judging.cached_response(self.cursor, key)
                if found is not None:
                    value: dict[str, Any] = json.loads(found)
                    self.mem[key] = value
                    self.hits += 1
                    return value
            self.misses += 1
            return None

    def put(
        self,
        key: str,
        task: str,
        model: str,
        version: str,
        input_hash: str,
        context_hash: str,
        value: dict[str, Any],
    ) -> None:
        now = datetime.now(UTC).replace(tzinfo=None)
        with self._lock:
            self.mem[key] = value
            self.pending.append(
                (
                    key,
                    task,
                    model,
                    version,
                    input_hash,
                    context_hash,
                    json.dumps(value, ensure_ascii=False),
                    now,
                )
            )

    def drain(self) -> list[tuple[Any, ...]]:
        with self._lock:
            out, self.pending = self.pending, []
            return out


def _numbered(sentences: list[Sentence]) -> str:
    return "\n".join(f"S{i + 1}: {s.text}" for i, s in enumerate(sentences)) or "(empty)"


class Judge:
    """The judge tasks. Raises ``JudgeSkipped`` (no call) or ``JudgeFailed`` (calls failed)."""

    def __init__(
        self, settings: JudgeSettings, client: JudgeClient | None, cache: JudgeCache | None = None
    ) -> None:
        self.settings = settings
        self.client = client
        self.cache = cache or JudgeCache()
        self.prompts = {
            t: load_prompt(t, settings.prompt_version) for t in ("claims", "facts", "citation", "refusal")
        }

    @property
    def version(self) -> dict[str, str]:
        return {"model": self.settings.model, "prompt_version": self.settings.prompt_version}

    def _cap(self, sentences: list[Sentence]) -> list[Sentence]:
        out, total = [], 0
        for s in sentences:
            total += len(s.text)
            if total > self.settings.max_context_chars:
                break
            out.append(s)
        return out

    def _ask(
        self, task: str, values: dict[str, str], schema: type[BaseModel], task_input: Any, context: Any
    ) -> Any:
        s = self.settings
        input_hash, context_hash = _sha(task_input), _sha(context)
        key = _sha([task, input_hash, context_hash, s.model, s.prompt_version])
        cached = self.cache.get(key)
        if cached is not None:
            return schema.model_validate(cached)
        if self.client is None:
            raise JudgeSkipped("no judge configured")
        system, user = self.prompts[task]
        messages = [
            {"role": "system", "content": system},
            {"role": "user", "content": string.Template(user).safe_substitute(values)},
        ]
        out = self.client.complete(task, messages, schema, cache_key=key)
        self.cache.put(key, task, s.model, s.prompt_version, input_hash, context_hash, out.model_dump())
        return out

    @staticmethod
    def _resolve(ref: str | None, sentences: list[Sentence]) -> Sentence | None:
        if not ref:
            return None
        m = re.fullmatch(r"\s*S?(\d+)\s*", str(ref))
        if not m:
            return None
        i = int(m.group(1)) - 1
        return sentences[i] if 0 <= i < len(sentences) else None

    def claims(self, question: str, answer: str, context: list[Sentence]) -> list[ItemVerdict]:
        """The answer's atomic claims, each supported / contradicted / unsupported by the context."""
        context = self._cap(context)
        ctx = [(c.text, c.doc_id) for c in context]
        out: ClaimsOut = self._ask(
            "claims",
            {"question": question, "answer": answer, "context": _numbered(context)},
            ClaimsOut,
            {"question": question, "answer": answer},
            ctx,
        )
        verdicts = []
        for c in out.claims:
            ev = self._resolve(c.sentence, context) if c.verdict != "unsupported" else None
            verdicts.append(
                ItemVerdict(c.text.strip(), c.verdict, ev.text if ev else None, ev.doc_id if ev else None)
            )
        return verdicts

    def facts(self, facts: list[tuple[str, str]], text: list[Sentence]) -> list[ItemVerdict]:
        """Each (id, fact) supported / contradicted / unsupported by the text; a verdict per fact, in order."""
        text = self._cap(text)
        listing = "\n".join(f"{fid}: {ftext}" for fid, ftext in facts)
        out: FactsOut = self._ask(
            "facts",
            {"facts": listing, "text": _numbered(text)},
            FactsOut,
            facts,
            [(t.text, t.doc_id) for t in text],
        )
        by_id = {f.id: f for f in out.facts}
        verdicts = []
        for fid, ftext in facts:
            f = by_id.get(fid)
            if f is None:  # the model skipped a fact: it found nothing for it
                verdicts.append(ItemVerdict(ftext, "unsupported", item_id=fid))
                continue
            ev = self._resolve(f.sentence, text) if f.verdict != "unsupported" else None
            verdicts.append(
                ItemVerdict(ftext, f.verdict, ev.text if ev else None, ev.doc_id if ev else None, fid)
            )
        return verdicts

    def citation(self, sentence: str, passage: list[Sentence]) -> ItemVerdict:
        passage = self._cap(passage)
        out: CitationOut = self._ask(
            "citation",
            {"sentence": sentence, "passage": _numbered(passage)},
            CitationOut,
            sentence,
            [(p.text, p.doc_id) for p in passage],
        )
        ev = self._resolve(out.sentence, passage) if out.verdict != "unsupported" else None
        return ItemVerdict(sentence, out.verdict, ev.text if ev else None, ev.doc_id if ev else None)

    def refusal(self, question: str, answer: str) -> RefusalOut:
        out: RefusalOut = self._ask(
            "refusal", {"question": question, "answer": answer}, RefusalOut, answer, question
        )
        return out
