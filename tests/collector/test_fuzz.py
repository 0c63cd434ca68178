"""Fuzzing the decode boundary: any bytes, any JSON, any nested AnyValue -> a 4xx or a stored batch.

Two levels: the decoder and flattener straight into a real (in-memory) DuckDB store, with more
examples, and the real server over HTTP, with fewer. Never a 5xx, never an exception other than the
``PermanentError`` family, never a dead server.
"""

from __future__ import annotations

import gzip
import itertools
import zlib
from collections.abc import Iterator
from typing import Any

import httpx
import orjson
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status

from collector.ingest.span_rows import flatten
from collector.receivers.payload import decode
from collector.store import Store
from ragfault_core.errors import PermanentError
from tests.conftest import Server, StartServer

FUZZ = settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
FUZZ_SERVER = settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
LIMIT = 1 << 20
_trace_ids = itertools.count(1 << 100)

# Keys the convention readers look at, so fuzzed values reach the normalizers, not only the raw columns.
KNOWN_KEYS = [
    "openinference.span.kind", "input.value", "output.value", "llm.token_count.prompt",
    "llm.token_count.completion", "llm.token_count.total", "reranker.top_k", "reranker.query",
    "retrieval.documents.0.document.content", "retrieval.documents.0.document.score",
    "retrieval.documents.0.document.metadata", "retrieval.documents.1.document.id",
    "llm.input_messages.0.message.content", "llm.input_messages.0.message.role",
    "reranker.output_documents.0.document.content", "gen_ai.operation.name", "gen_ai.usage.input_tokens",
    "gen_ai.usage.output_tokens", "gen_ai.usage.total_tokens", "gen_ai.request.top_k",
    "gen_ai.retrieval.documents", "gen_ai.retrieval.query.text", "gen_ai.input.messages",
    "gen_ai.output.messages", "gen_ai.tool.call.arguments", "gen_ai.tool.name", "traceloop.span.kind",
    "traceloop.entity.input", "traceloop.entity.output", "ragfault.case_id", "ragfault.run_id",
    "ragfault.user_scope", "ragfault.answer.citations", "ragfault.context.documents", "session.id", "user.id",
]  # fmt: skip
KIND_VALUES = ["LLM", "RETRIEVER", "RERANKER", "TOOL", "AGENT", "CHAIN", "EMBEDDING", "chat", "retrieval",
               "execute_tool", "invoke_agent", "workflow", "task", "vector_db_retrieve"]  # fmt: skip

INT64 = st.integers(min_value=-(2**63), max_value=2**63 - 1)
UINT64 = st.integers(min_value=0, max_value=2**64 - 1)
INT32 = st.integers(min_value=-(2**31), max_value=2**31 - 1)
UINT32 = st.integers(min_value=0, max_value=2**32 - 1)

numeric_text = st.one_of(
    st.integers(min_value=-(10**40), max_value=10**40).map(str),
    st.integers(min_value=2**31 - 1, max_value=10**30).map(str),  # past int32 / int64 columns
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.sampled_from(["1e308", "-1e400", "nan", "inf", " 12 ", "0x10", "3.0", "", "٣"]),
)
json_scalars = st.one_of(st.none(), st.booleans(), INT64, st.floats(allow_nan=False), st.text(max_size=20))
json_values = st.recursive(
    json_scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=10), inner, max_size=4)
    ),
    max_leaves=20,
)


def _scalar_any() -> st.SearchStrategy[AnyValue]:
    return st.one_of(
        st.text(max_size=30).map(lambda s: AnyValue(string_value=s)),
        numeric_text.map(lambda s: AnyValue(string_value=s)),
        json_values.map(lambda v: AnyValue(string_value=orjson.dumps(v).decode())),
        st.sampled_from(KIND_VALUES).map(lambda s: AnyValue(string_value=s)),
        INT64.map(lambda i: AnyValue(int_value=i)),
        st.floats(allow_nan=True, allow_infinity=True).map(lambda f: AnyValue(double_value=f)),
        st.booleans().map(lambda b: AnyValue(bool_value=b)),
        st.binary(max_size=20).map(lambda b: AnyValue(bytes_value=b)),
        st.just(AnyValue()),  # no value set at all
    )


def _array(values: list[AnyValue]) -> AnyValue:
    av = AnyValue()
    av.array_value.values.extend(values)
    return av


def _kvlist(items: list[tuple[str, AnyValue]]) -> AnyValue:
    av = AnyValue()
    av.kvlist_value.values.extend(KeyValue(key=k, value=v) for k, v in items)
    return av


any_values = st.recursive(
    _scalar_any(),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4).map(_array),
        st.lists(st.tuples(st.text(max_size=8), inner), max_size=4).map(_kvlist),
    ),
    max_leaves=12,
)


@st.composite
def deep_values(draw: st.DrawFn) -> AnyValue:
    """One chain of arrays / kvlists nested deeper than the flattener's cap (32), within what the
    protobuf parser accepts (100 message levels; the request wrapping takes 6)."""
    value = draw(_scalar_any())
    budget = draw(st.integers(min_value=2, max_value=92))
    while True:
        use_array = draw(st.booleans())
        cost = 2 if use_array else 3  # AnyValue + ArrayValue, or AnyValue + KeyValueList + KeyValue
        if cost > budget:
            return value
        budget -= cost
        value = _array([value]) if use_array else _kvlist([("k", value)])


def nest_in_place(root: AnyValue, levels: int) -> None:
    """An array chain built top-down, so no intermediate copy hits protobuf's parse depth limit."""
    cur = root
    for _ in range(levels):
        cur = cur.array_value.values.add()
    cur.string_value = "bottom"


indexed_keys = st.builds(
    "{}.{}.{}".format,
    st.sampled_from(
        [
            "retrieval.documents",
            "reranker.input_documents",
            "reranker.output_documents",
            "llm.input_messages",
            "llm.output_messages",
        ]
    ),  # fmt: skip
    st.one_of(st.integers(0, 3), st.integers(0, 10**30), st.text(max_size=3)),
    st.sampled_from(["document.content", "document.id", "document.score", "message.content", "message.role"]),
)
keys = st.one_of(st.sampled_from(KNOWN_KEYS), indexed_keys, st.text(max_size=12))
random_attributes = st.lists(
    st.tuples(
        keys, st.one_of(any_values, deep_values(), numeric_text.map(lambda s: AnyValue(string_value=s)))
    ),
    max_size=6,
)
# A span kind of one convention plus its keys, so the typed columns (token counts, top_k, positions,
# scores) get fuzzed values and not only the raw JSON columns.
NUMERIC_KEYS = [k for k in KNOWN_KEYS if "token" in k or "top_k" in k or "score" in k]
KIND_PAIRS = (
    [("openinference.span.kind", v) for v in ("LLM", "RETRIEVER", "RERANKER", "TOOL", "AGENT")]
    + [
        ("gen_ai.operation.name", v)
        for v in ("chat", "retrieval", "execute_tool", "invoke_agent", "embeddings")
    ]
    + [("traceloop.span.kind", v) for v in ("workflow", "task", "tool")]
)
convention_attributes = st.tuples(
    st.sampled_from(KIND_PAIRS),
    st.lists(
        st.tuples(
            st.one_of(st.sampled_from(NUMERIC_KEYS), st.sampled_from(KNOWN_KEYS), indexed_keys),
            st.one_of(numeric_text.map(lambda s: AnyValue(string_value=s)), any_values),
        ),
        min_size=1,
        max_size=8,
    ),
).map(lambda t: [(t[0][0], AnyValue(string_value=t[0][1])), *t[1]])
attributes = st.one_of(random_attributes, convention_attributes, convention_attributes).map(
    lambda items: [KeyValue(key=k, value=v) for k, v in items]
)

# Mostly valid ids (non-zero, right length), so most spans get past validation and reach the store.
_valid16 = st.integers(1, 2**128 - 1).map(lambda i: i.to_bytes(16, "big"))
_valid8 = st.integers(1, 2**64 - 1).map(lambda i: i.to_bytes(8, "big"))
ids16 = st.one_of(_valid16, _valid16, _valid16, st.binary(max_size=20))
ids8 = st.one_of(_valid8, _valid8, _valid8, st.binary(max_size=10))


@st.composite
def spans(draw: st.DrawFn) -> Span:
    s = Span(
        trace_id=draw(ids16),
        span_id=draw(ids8),
        parent_span_id=draw(st.one_of(st.just(b""), ids8)),
        name=draw(st.text(max_size=20)),
        kind=Span.SpanKind.ValueType(draw(st.one_of(st.integers(0, 6), INT32))),
        start_time_unix_nano=draw(UINT64),
        end_time_unix_nano=draw(UINT64),
        flags=draw(UINT32),
        trace_state=draw(st.text(max_size=10)),
        dropped_attributes_count=draw(UINT32),
        status=Status(
            code=Status.StatusCode.ValueType(draw(st.one_of(st.integers(0, 3), INT32))),
            message=draw(st.text(max_size=10)),
        ),
    )
    s.attributes.extend(draw(attributes))
    for _ in range(draw(st.integers(0, 2))):
        ev = s.events.add(name=draw(st.text(max_size=8)), time_unix_nano=draw(UINT64))
        ev.attributes.extend(draw(attributes))
    for _ in range(draw(st.integers(0, 2))):
        lk = s.links.add(trace_id=draw(st.binary(max_size=17)), span_id=draw(st.binary(max_size=9)))
        lk.attributes.extend(draw(attributes))
    return s


@st.composite
def requests(draw: st.DrawFn) -> ExportTraceServiceRequest:
    req = ExportTraceServiceRequest()
    for _ in range(draw(st.integers(1, 2))):
        rs = req.resource_spans.add()
        rs.resource.attributes.extend(draw(attributes))
        rs.schema_url = draw(st.text(max_size=10))
        for _ in range(draw(st.integers(1, 2))):
            ss = rs.scope_spans.add()
            ss.scope.name = draw(st.text(max_size=8))
            ss.scope.attributes.extend(draw(attributes))
            ss.spans.extend(draw(st.lists(spans(), min_size=1, max_size=3)))
    return req


def _otlp_json_shaped(draw: st.DrawFn) -> Any:
    """Dicts shaped like OTLP/JSON with arbitrary values at the leaves."""
    leaf = st.one_of(json_values, st.binary(min_size=0, max_size=18).map(bytes.hex))
    span = st.dictionaries(
        st.sampled_from(
            [
                "traceId",
                "spanId",
                "parentSpanId",
                "name",
                "kind",
                "startTimeUnixNano",
                "endTimeUnixNano",
                "attributes",
                "events",
                "links",
                "status",
                "trace_id",
                "span_id",
                "flags",
                "droppedAttributesCount",
            ]
        ),  # fmt: skip
        leaf,
    )
    spans_ = draw(st.lists(span, max_size=3))
    return {"resourceSpans": [{"resource": draw(st.one_of(json_values, st.just({}))),
                               "scopeSpans": [{"scope": {"name": "x"}, "spans": spans_}]}]}  # fmt: skip


otlp_json_shaped = st.composite(_otlp_json_shaped)()

CONTENT_TYPES = st.sampled_from(
    ["application/x-protobuf", "application/json", "application/json; charset=utf-8", "text/plain", ""]
)


def encode_body(draw: st.DrawFn, raw: bytes) -> tuple[bytes, str | None]:
    encoding = draw(st.sampled_from([None, "gzip", "deflate", "identity"]))
    if encoding == "gzip":
        return gzip.compress(raw), encoding
    if encoding == "deflate":
        return zlib.compress(raw), encoding
    return raw, encoding


@st.composite
def bodies(draw: st.DrawFn) -> tuple[bytes, str, str | None]:
    """(body, content type, content encoding) from every family of input."""
    choice = draw(st.sampled_from(["bytes", "json", "otlp-json", "protobuf", "protobuf-as-json"]))
    if choice == "bytes":
        raw = draw(st.binary(max_size=300))
        ctype = draw(CONTENT_TYPES)
        if draw(st.booleans()):  # arbitrary bytes claiming to be gzip, unwrapped
            return raw, ctype, "gzip"
    elif choice == "json":
        raw, ctype = orjson.dumps(draw(json_values)), "application/json"
    elif choice == "otlp-json":
        raw, ctype = orjson.dumps(draw(otlp_json_shaped)), "application/json"
    elif choice == "protobuf":
        raw, ctype = draw(requests()).SerializeToString(), "application/x-protobuf"
    else:  # a protobuf request's canonical JSON mapping (base64 ids, not hex: mostly refused)
        from google.protobuf import json_format

        raw = orjson.dumps(json_format.MessageToDict(draw(requests())))
        ctype = "application/json"
    body, enc = encode_body(draw, raw)
    return body, ctype, enc


# --- decoder + flattener + store, in process --------------------------------------------------


@pytest.fixture(scope="module")
def memory_store() -> Iterator[Store]:
    store = Store(":memory:")
    try:
        yield store
    finally:
        store.close()


def ingest(store: Store, body: bytes, ctype: str | None, enc: str | None) -> int | None:
    """What the receiver does with a body: None when refused, else the number of spans stored."""
    try:
        req, _ = decode(body, ctype, enc, LIMIT)
    except PermanentError:
        return None
    batch = flatten(req)
    assert batch.rejected + len(batch) == sum(
        len(ss.spans) for rs in req.resource_spans for ss in rs.scope_spans
    )
    con = store.cursor()
    try:
        return store.write_spans(con, batch)
    finally:
        con.close()


@FUZZ
@given(body=bodies())
def test_decode_flatten_store_any_input(memory_store: Store, body: tuple[bytes, str, str | None]) -> None:
    ingest(memory_store, *body)


@FUZZ
@given(req=requests())
def test_any_protobuf_request_is_stored_or_refused_span_by_span(
    memory_store: Store, req: ExportTraceServiceRequest
) -> None:
    # A valid protobuf never fails as a whole: its spans are stored or rejected one by one.
    stored = ingest(memory_store, req.SerializeToString(), "application/x-protobuf", None)
    assert stored is not None


@settings(FUZZ, max_examples=100)
@example(("openinference.span.kind", "LLM"), "llm.token_count.prompt", AnyValue(string_value="1" * 25))
@example(("openinference.span.kind", "RERANKER"), "reranker.top_k", AnyValue(int_value=3_000_000_000))
@example(("openinference.span.kind", "RETRIEVER"), "retrieval.documents.9999999999.document.content",
         AnyValue(string_value="far"))  # fmt: skip
@given(
    kind=st.sampled_from(KIND_PAIRS),
    key=st.one_of(st.sampled_from(NUMERIC_KEYS), indexed_keys),
    value=st.one_of(
        numeric_text.map(lambda s: AnyValue(string_value=s)),
        INT64.map(lambda i: AnyValue(int_value=i)),
        st.floats().map(lambda f: AnyValue(double_value=f)),
    ),  # fmt: skip
)
def test_numbers_out_of_column_range_never_fail_a_write(
    memory_store: Store, kind: tuple[str, str], key: str, value: AnyValue
) -> None:
    # Token counts, top_k and document positions land in typed columns; a value that does not fit
    # must not turn the whole (coalesced) batch into a failed write. The raw attribute keeps it.
    req = ExportTraceServiceRequest()
    span = req.resource_spans.add().scope_spans.add().spans.add(trace_id=b"\x01" * 16, span_id=b"\x02" * 8)
    span.attributes.add(key=kind[0], value=AnyValue(string_value=kind[1]))
    span.attributes.add(key=key).value.CopyFrom(value)
    span.trace_id = next(_trace_ids).to_bytes(16, "big")  # a new span every run (no re-send)
    assert ingest(memory_store, req.SerializeToString(), "application/x-protobuf", None) == 1


def test_deep_nesting_is_refused_or_capped(memory_store: Store) -> None:
    req = ExportTraceServiceRequest()
    span = req.resource_spans.add().scope_spans.add().spans.add(trace_id=b"\x01" * 16, span_id=b"\x02" * 8)
    nest_in_place(span.attributes.add(key="deep").value, 2000)
    # protobuf refuses to parse beyond its recursion limit: a clean 400-class error, not a crash
    assert ingest(memory_store, req.SerializeToString(), "application/x-protobuf", None) is None
    deep: dict[str, Any] = {"stringValue": "x"}
    for _ in range(5000):
        deep = {"arrayValue": {"values": [deep]}}
    one = {"traceId": "01" * 16, "spanId": "02" * 8, "attributes": [{"key": "d", "value": deep}]}
    doc = {"resourceSpans": [{"scopeSpans": [{"spans": [one]}]}]}
    try:
        body = orjson.dumps(doc)
    except orjson.JSONEncodeError:  # orjson itself caps nesting; build the text by hand
        body = (
            b'{"resourceSpans":[{"scopeSpans":[{"spans":[{"attributes":[{"key":"d","value":'
            + (b'{"arrayValue":{"values":[' * 5000)
            + b'{"stringValue":"x"}'
            + b"]}}" * 5000
            + b"}]}]}]}]}"
        )
    assert ingest(memory_store, body, "application/json", None) is None


# --- the real server --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def fuzz_server(start_module_server: StartServer) -> Server:
    return start_module_server(max_body_bytes=LIMIT, max_decompressed_bytes=LIMIT)


def check_response(r: httpx.Response, ctype: str) -> None:
    assert r.status_code < 500, (r.status_code, r.content[:300])
    assert r.status_code in (200, 400, 413, 415), r.status_code
    if r.status_code == 200:
        if "json" in ctype:
            orjson.loads(r.content)
        else:
            ExportTraceServiceResponse.FromString(r.content)


@FUZZ_SERVER
@given(body=bodies())
def test_server_answers_4xx_or_200_to_anything(
    fuzz_server: Server, body: tuple[bytes, str, str | None]
) -> None:
    data, ctype, enc = body
    headers = {"Content-Type": ctype}
    if enc:
        headers["Content-Encoding"] = enc
    check_response(fuzz_server.http.post("/v1/traces", content=data, headers=headers), ctype)


@FUZZ_SERVER
@given(req=requests())
def test_server_stores_any_protobuf_request(fuzz_server: Server, req: ExportTraceServiceRequest) -> None:
    r = fuzz_server.http.post(
        "/v1/traces", content=req.SerializeToString(), headers={"Content-Type": "application/x-protobuf"}
    )
    assert r.status_code == 200, (r.status_code, r.content[:300])
    resp = ExportTraceServiceResponse.FromString(r.content)
    total = sum(len(ss.spans) for rs in req.resource_spans for ss in rs.scope_spans)
    assert resp.partial_success.rejected_spans <= total


def test_server_is_alive_and_storing_after_fuzzing(fuzz_server: Server) -> None:
    from tests.collector.otlp_build import new_trace_id, request, span

    assert fuzz_server.http.get("/healthz").status_code == 200
    tid = new_trace_id()
    r = fuzz_server.http.post(
        "/v1/traces",
        content=request([span(tid)]).SerializeToString(),
        headers={"Content-Type": "application/x-protobuf"},
    )
    assert r.status_code == 200
    assert fuzz_server.scalar("SELECT count(*) FROM spans WHERE trace_id = $t", t=tid.hex()) == 1
    assert fuzz_server.runtime.metrics.get("ragfault_write_errors_total") == 0
