"""The one token check, used by both receivers (OTLP/HTTP, OTLP/gRPC), the API, the UI and /metrics.

A request carries the token as ``Authorization: Bearer <token>``, or as the password of HTTP Basic
(any user name: what a browser sends after asking for it on ``/ui``). Every ``authorization`` value
a request carries is checked, so a request with several (gRPC metadata may repeat a key, HTTP may
repeat a header) is refused as soon as one of them is missing the token or holds another one.
"""

from __future__ import annotations

import base64
import binascii
import hmac
from collections.abc import Iterable

from ragfault_core.errors import Unauthorized


def _given(value: str) -> bytes | None:
    scheme, _, rest = value.strip().partition(" ")
    scheme = scheme.lower()
    if scheme == "bearer":
        return rest.strip().encode()
    if scheme == "basic":
        try:
            decoded = base64.b64decode(rest.strip(), validate=True)
        except (binascii.Error, ValueError):
            return None
        user, sep, password = decoded.partition(b":")
        return password if sep else None
    return None


def check_token(values: Iterable[str], token: str | None) -> None:
    """Raise ``Unauthorized`` unless ``token`` is unset or every value in ``values`` (the request's
    ``authorization`` headers or metadata entries, at least one) carries exactly ``token``."""
    if not token:
        return
    expected = token.encode()
    seen = False
    for value in values:
        seen = True
        given = _given(str(value))
        # compare_digest on every value: the time taken says nothing of where a wrong token differs
        if given is None or not hmac.compare_digest(given, expected):
            raise Unauthorized("missing or invalid bearer token")
    if not seen:
        raise Unauthorized("missing or invalid bearer token")
