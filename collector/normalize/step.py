"""The model every convention reader fills: ``Step`` and its ``Doc`` list, the ``Literal`` step
types, stages and conventions they hold, and ``Reader``, what a convention is to
``normalize_span``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple, get_args

# What a step is (docs/architecture.md, Conventions and readers): the values of ``steps.step_type``.
StepType = Literal["retrieval", "rerank", "llm", "tool", "agent", "chain", "embedding", "other"]
# Where a document was seen, as a span reports it (docs/architecture.md, Evidence and matching): the values of ``step_documents.stage``
# that readers write. Settling derives ``context`` from the answering prompt, and ``surfaced`` /
# ``opened`` for search agents (``collector.settling.search_stages``).
Stage = Literal["candidate", "reranked", "context", "rerank_input"]
# Which reader read a span: the values of ``steps.convention`` (``structural``: no convention reader
# claimed the span, and ``collector.normalize.shape`` read it by the shape of its payloads; ``mapping``:
# no reader claimed it, and a ``[[conventions.mapping]]`` entry of the config file read it).
Convention = Literal[
    "openinference", "traceloop", "haystack", "vercel_ai", "genai", "structural", "unknown", "mapping"
]

STEP_TYPES: tuple[StepType, ...] = get_args(StepType)
STAGES: tuple[Stage, ...] = get_args(Stage)
CONVENTIONS: tuple[Convention, ...] = get_args(Convention)


@dataclass(slots=True)
class Doc:
    """One document seen by a step: a retrieval candidate, a reranker output or a context document."""

    stage: Stage
    position: int
    chunk_id: str | None = None
    doc_id: str | None = None
    content: str | None = None
    score: float | None = None
    metadata: dict[str, Any] | None = None
    metadata_json: str | None = None  # the metadata as received, when it was a JSON object string


@dataclass(slots=True)
class Step:
    """The convention-independent reading of one span."""

    step_type: StepType = "other"
    convention: Convention = "unknown"
    model: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    total_tokens: int | None = None
    query_text: str | None = None
    input_text: str | None = None
    output_text: str | None = None
    tool_name: str | None = None
    tool_arguments: str | None = None
    tool_result: str | None = None
    top_k: int | None = None
    session_id: str | None = None
    user_id: str | None = None
    case_id: str | None = None
    run_id: str | None = None
    user_scope: list[str] | None = None
    citations: list[str] | None = None
    data_source_id: str | None = None  # the knowledge source a retrieval searched
    docs: list[Doc] = field(default_factory=list)
    # the fields the structural layer filled, each with its rule and key (``shape:documents@output``),
    # and those a reader left empty on purpose (``traceloop:...``); every other field was read by the
    # step's ``convention``. None when there is nothing to say.
    provenance: dict[str, str] | None = None
    # the run's marks sent on the span (ragfault.run_group, ragfault.baseline_of): the run_marks view
    run_group: str | None = None
    baseline_of: str | None = None


class Reader(NamedTuple):
    """One convention: ``detect`` says whether a span's attributes are written in it, ``read`` fills
    the step from them (never raising on odd values)."""

    convention: Convention
    detect: Callable[[dict[str, Any]], bool]
    read: Callable[[dict[str, Any], Step, tuple[str, ...]], None]
    # the key prefixes the reader reads: the structural layer beneath it leaves those keys to it
    owns: tuple[str, ...] = ()
