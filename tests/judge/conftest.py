from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.judge.fakellm import FakeLLM


@pytest.fixture
def llm() -> Iterator[FakeLLM]:
    fake = FakeLLM().start()
    try:
        yield fake
    finally:
        fake.stop()
