"""Mappings without code (issue 40, item 3), through real servers and real OTLP exports.

Every planted root cause is sent twice: in the ``acme`` namespace that the structural layer reads by
shape (``tests.attribution.test_convention_blind.emit``), and with its keys renamed and its payloads
reshaped so that nothing can be read by shape (``acme.q``, documents as ``{"ref", "body": {"v":
{"passage"}}, "rel"}`` inside ``{"items": [...]}``: the text two objects deep, the prompt under
``acme.llm.payload``). Then
``ragfault doctor`` is asked about the renamed spans: it names what their keys look like and prints
the ``[[conventions.mapping]]`` entries that would read them; a second server started with exactly
that config reads the renamed traces into the same root causes as the readable ones.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.trace import Tracer

from ragfault.settings import load_settings
from ragfault_core.errors import ConfigError
from tests.attribution.conftest import serve, wait_evaluated
from tests.attribution.data import GOLD, KB, PLANTS, QUERY, Plant, docs, jsonl
from tests.attribution.test_convention_blind import emit
from tests.conftest import Server, make_settings
from tests.otel_helpers import http_provider
from tests.tracegen import prompt_for

ROOT = Path(__file__).resolve().parents[2]
KEYS = [f"{lang}/{cause}" for lang in ("en", "zh") for cause in PLANTS[lang]]


def _items(ds: list[dict[str, Any]]) -> str:
    return json.dumps(
        [{"ref": d["id"], "body": {"v": {"passage": d["content"]}}, "rel": d["score"]} for d in ds]
    )


def emit_renamed(tracer: Tracer, plant: Plant) -> str:
    """``plant`` with keys no reader knows and payloads of no shape the structural layer reads."""
    case_id, cands, reranked, answer, citations, retrieve = plant
    query = QUERY[case_id]
    candidates, kept = docs(cands), docs(reranked) if reranked is not None else None
    context = (kept if kept is not None else candidates) if retrieve else []
    root = {"acme.q": query, "acme.a": answer, "ragfault.case_id": case_id}
    with tracer.start_as_current_span("acme.request", attributes=root) as span:
        trace_id = format(span.get_span_context().trace_id, "032x")
        if retrieve:
            hits = json.dumps({"items": json.loads(_items(candidates)), "total": len(candidates)})
            with tracer.start_as_current_span("acme.search", attributes={"acme.q": query, "acme.hits": hits}):
                pass
            if kept is not None:
                rerank = {"acme.pool": _items(candidates), "acme.kept": _items(kept)}
                with tracer.start_as_current_span("acme.rerank", attributes=rerank):
                    pass
        payload = {"model": "m", "conversation": [{"role": "user", "content": prompt_for(query, context)}]}
        llm: dict[str, Any] = {
            "acme.llm.payload": json.dumps(payload, ensure_ascii=False),
            "acme.llm.said": answer,
        }
        if citations:
            llm["ragfault.answer.citations"] = list(citations)
        with tracer.start_as_current_span("acme.generate", attributes=llm):
            pass
    return trace_id


def _send(srv: Server, renamed_only: bool) -> dict[str, str]:
    assert srv.http.post("/api/v1/kb", content=jsonl(KB)).json()["loaded"] == len(KB)
    assert srv.http.post("/api/v1/gold", content=jsonl(GOLD)).json()["loaded"] == len(GOLD)
    provider = http_provider(srv.url, batch=True)
    tracer = provider.get_tracer("mapping")
    ids = {}
    for key in KEYS:
        lang, cause = key.split("/", 1)
        ids[f"renamed/{key}"] = emit_renamed(tracer, PLANTS[lang][cause])
        if not renamed_only:
            ids[f"plain/{key}"] = emit(tracer, PLANTS[lang][cause])
    provider.shutdown()
    wait_evaluated(srv, list(ids.values()))
    return ids


def _root_cause(srv: Server, trace_id: str) -> str | None:
    rows = srv.sql("SELECT root_cause FROM attribution WHERE trace_id = $t", t=trace_id)
    return rows[0][0] if rows else None


@pytest.fixture(scope="module")
def before(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[dict[str, str | None], str, dict[str, Any]]]:
    """No mapping: the readable traces' root causes, and what the doctor says of the renamed ones."""
    for srv in serve(tmp_path_factory.mktemp("mapping-before")):
        ids = _send(srv, renamed_only=False)
        unread = srv.sql(
            "SELECT DISTINCT convention FROM steps WHERE list_contains($ids, trace_id)",
            ids=[t for k, t in ids.items() if k.startswith("renamed/")],
        )
        assert unread == [["unknown"]], f"the renamed spans must be unreadable without a mapping: {unread}"
        causes = {k: _root_cause(srv, t) for k, t in ids.items()}
        done = subprocess.run(
            [sys.executable, "-m", "ragfault.cli", "doctor", "--server", srv.url, "--format", "json"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        text = subprocess.run(
            [sys.executable, "-m", "ragfault.cli", "doctor", "--server", srv.url],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert text.returncode == 0, text.stderr
        yield causes, text.stdout, json.loads(done.stdout)["mappings"]


def test_without_a_mapping_no_layer_is_blamed_that_the_trace_cannot_show(
    before: tuple[dict[str, str | None], str, dict[str, Any]],
) -> None:
    """Spans nobody could read show no retrieval, no prompt and no answer: the only layer such a trace
    (with its gold case, joined by ``ragfault.case_id``) can still prove is the registry's
    ``evidence_not_in_kb``; everything else is ``insufficient_trace``, never a retrieval miss."""
    causes, _text, _mappings = before
    renamed = {k: c for k, c in causes.items() if k.startswith("renamed/")}
    assert len(renamed) == len(KEYS)
    wrong = {k: c for k, c in renamed.items() if c not in ("insufficient_trace", "evidence_not_in_kb")}
    assert wrong == {}, wrong
    assert list(renamed.values()).count("insufficient_trace") >= len(KEYS) - 4


def test_the_doctor_names_what_the_unread_keys_look_like(
    before: tuple[dict[str, str | None], str, dict[str, Any]],
) -> None:
    _causes, text, mappings = before
    looks = {(s["span_name"], k["key"]): k["looks_like"] for s in mappings["spans"] for k in s["keys"]}
    assert looks[("acme.request", "acme.q")] == "question"
    assert looks[("acme.request", "acme.a")] == "answer"
    assert looks[("acme.search", "acme.hits")] == "documents"
    assert looks[("acme.rerank", "acme.kept")] == "documents (reranked)"
    assert looks[("acme.rerank", "acme.pool")] == "documents (rerank input)"
    assert looks[("acme.generate", "acme.llm.payload")] == "prompt messages"
    assert looks[("acme.generate", "acme.llm.said")] == "answer"
    assert "[[conventions.mapping]]" in text and mappings["toml"].splitlines()[0] in text
    search = next(e for s in mappings["spans"] for e in s["entries"] if e["name"] == "acme.search")
    assert search == {
        "name": "acme.search",
        "span_name": r"acme\.search",
        "scope": "mapping",
        "step_type": "retrieval",
        "documents": "acme.hits$.items",
        "document_text": "body.v.passage",
        "document_id": "ref",
        "document_score": "rel",
        "query": "acme.q",
    }


@pytest.fixture(scope="module")
def after(
    tmp_path_factory: pytest.TempPathFactory, before: tuple[dict[str, str | None], str, dict[str, Any]]
) -> Iterator[tuple[Server, dict[str, str]]]:
    """A server started with the mapping the doctor printed, sent the renamed traces again. It
    decodes in a worker process, as a production server does: the mappings travel there."""
    config = before[2]["toml"]
    tomllib.loads(config)  # what the doctor prints is a config file as it stands
    tmp = tmp_path_factory.mktemp("mapping-after")
    (tmp / "ragfault.toml").write_text(config, encoding="utf-8")
    srv = Server(make_settings(tmp, config_file=str(tmp / "ragfault.toml"), decode_workers=1))
    try:
        assert srv.runtime.pipeline.pool is not None and len(srv.runtime.pipeline.options.mappings) == 5
        yield srv, _send(srv, renamed_only=True)
    finally:
        srv.stop()


@pytest.mark.parametrize("key", KEYS)
def test_the_suggested_mapping_gives_the_same_root_causes(
    before: tuple[dict[str, str | None], str, dict[str, Any]], after: tuple[Server, dict[str, str]], key: str
) -> None:
    causes, _text, _mappings = before
    srv, ids = after
    assert causes[f"plain/{key}"] == key.split("/", 1)[1], "the readable trace itself is read right"
    assert _root_cause(srv, ids[f"renamed/{key}"]) == causes[f"plain/{key}"]
    steps = dict(srv.sql("SELECT name, step_type FROM steps WHERE trace_id = $t", t=ids[f"renamed/{key}"]))
    conventions = {
        c for (c,) in srv.sql("SELECT convention FROM steps WHERE trace_id = $t", t=ids[f"renamed/{key}"])
    }
    assert conventions == {"mapping"} and steps["acme.generate"] == "llm", steps
    assert (
        steps.get("acme.search", "retrieval") == "retrieval"
        and steps.get("acme.rerank", "rerank") == "rerank"
    )


def test_a_bad_mapping_stops_startup_naming_the_entry(tmp_path: Path) -> None:
    path = tmp_path / "ragfault.toml"
    path.write_text('[[conventions.mapping]]\nname = "acme llm"\nspan_name = "acme\\\\.(gen"\nprompt = "p"\n')
    with pytest.raises(ConfigError, match=r"\[conventions\] mapping\.0: mapping 'acme llm': span_name"):
        load_settings(path)
    path.write_text('[[conventions.mapping]]\nname = "no match"\nprompt = "p"\n')
    with pytest.raises(ConfigError, match="mapping 'no match': needs span_name, scope or attribute"):
        load_settings(path)
    path.write_text('[[conventions.mapping]]\nspan_name = "x"\nquery = "q"\nanswr = "a"\n')
    with pytest.raises(ConfigError, match=r"mapping\.0\.answr: unknown setting"):
        load_settings(path)
