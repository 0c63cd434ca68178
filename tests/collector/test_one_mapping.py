"""One token check and one status mapping for every transport (ragfault_core/auth.py,
ragfault_core/errors.py): the same ``authorization`` values are accepted or refused alike by OTLP/HTTP,
OTLP/gRPC, the API and ``/metrics``, and the same bad payload gets the same status and message over
HTTP and gRPC."""

from __future__ import annotations

import base64

import grpc
import httpx
import pytest
from google.rpc import status_pb2
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2_grpc

from ragfault_core.auth import check_token
from ragfault_core.errors import GRPC_INVALID_ARGUMENT, PermanentError, Unauthorized, status_of
from tests.collector.otlp_build import new_trace_id, raw_export, request, span
from tests.conftest import Server

TOKEN = "s3cret"


def basic(user_password: bytes) -> str:
    return "Basic " + base64.b64encode(user_password).decode()


# the authorization values a request carries -> whether the token check lets it through
CASES: list[tuple[list[str], bool]] = [
    ([], False),
    ([f"Bearer {TOKEN}"], True),
    ([f"bearer {TOKEN}"], True),  # the scheme is case-insensitive
    ([f"Bearer  {TOKEN}"], True),  # spaces around the token are not part of it
    ([basic(f"anyone:{TOKEN}".encode())], True),
    ([basic(TOKEN.encode())], False),  # Basic without a user:password pair
    (["Basic !!not-base64"], False),
    ([TOKEN], False),  # no scheme
    ([f"Bearer {TOKEN}x"], False),
    ([f"Bearer {TOKEN[:-1]}"], False),
    ([f"Token {TOKEN}"], False),
    ([f"Bearer {TOKEN}", f"Bearer {TOKEN}"], True),
    ([f"Bearer {TOKEN}", "Bearer wrong"], False),  # every value is checked, not the first
    (["Bearer wrong", f"Bearer {TOKEN}"], False),
]


def decision(values: list[str]) -> bool:
    try:
        check_token(values, TOKEN)
    except Unauthorized:
        return False
    return True


def test_the_token_check_itself() -> None:
    assert [decision(values) for values, _ in CASES] == [allowed for _, allowed in CASES]
    check_token([], None)  # no token set: nothing to check
    check_token(["Bearer anything"], "")


@pytest.mark.server_settings(ingest_token=TOKEN, api_token=TOKEN, protect_metrics=True)
def test_every_transport_accepts_and_refuses_the_same_authorization_values(server: Server) -> None:
    srv = server
    body = request([span(new_trace_id())]).SerializeToString()
    answers: dict[str, list[bool]] = {"otlp_http": [], "grpc": [], "api": [], "metrics": []}
    refusals: set[str] = set()  # the message of each refusal, on every transport
    with httpx.Client(base_url=srv.url, timeout=30) as http, grpc.insecure_channel(srv.grpc_endpoint) as ch:
        stub = trace_service_pb2_grpc.TraceServiceStub(ch)
        for values, _ in CASES:
            headers = [("authorization", v) for v in values]
            r = http.post(
                "/v1/traces", content=body, headers=[("content-type", "application/x-protobuf"), *headers]
            )
            assert r.status_code in (200, 401), r.text
            if r.status_code == 401:
                assert "Bearer" in r.headers["www-authenticate"]
                refusals.add(status_pb2.Status.FromString(r.content).message)
            answers["otlp_http"].append(r.status_code == 200)

            try:
                stub.Export(request([span(new_trace_id())]), timeout=30, metadata=headers or None)
                answers["grpc"].append(True)
            except grpc.RpcError as exc:
                assert exc.code() == grpc.StatusCode.UNAUTHENTICATED, exc
                refusals.add(exc.details())
                answers["grpc"].append(False)

            r = http.post("/api/v1/sql", json={"sql": "SELECT 1"}, headers=headers)
            assert r.status_code in (200, 401), r.text
            if r.status_code == 401:
                assert r.json()["error"] == "Unauthorized"
                refusals.add(r.json()["detail"])
            answers["api"].append(r.status_code == 200)

            r = http.get("/metrics", headers=headers)
            assert r.status_code in (200, 401), r.text
            answers["metrics"].append(r.status_code == 200)
    expected = [allowed for _, allowed in CASES]
    assert answers == {name: expected for name in answers}
    with pytest.raises(Unauthorized) as refused:
        check_token([], TOKEN)
    assert refusals == {status_of(refused.value).message}


@pytest.mark.parametrize(
    "body",
    [b"\xff\xff\xff\xff", b"\x0a\xff\xff\xff\x0f", request([span(new_trace_id())]).SerializeToString()[:-3]],
    ids=["garbage", "overlong-length", "truncated"],
)
def test_a_bad_payload_gets_the_same_status_and_message_over_http_and_grpc(
    server: Server, body: bytes
) -> None:
    r = httpx.post(
        server.url + "/v1/traces",
        content=body,
        headers={"content-type": "application/x-protobuf"},
        timeout=30,
    )
    expected = status_of(PermanentError("x"))
    assert r.status_code == expected.http == 400
    http_status = status_pb2.Status.FromString(r.content)
    assert http_status.code == GRPC_INVALID_ARGUMENT and http_status.message

    with grpc.insecure_channel(server.grpc_endpoint) as ch, pytest.raises(grpc.RpcError) as info:
        raw_export(ch)(body, timeout=30)
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert info.value.details() == http_status.message
    assert server.scalar("SELECT count(*) FROM spans") == 0
