"""The shared wait helper: it returns what it waited for, and at its deadline says what it last saw.
Driven by the manual clock, so the deadline is tested without any time passing."""

from __future__ import annotations

import pytest

from tests.clock import ManualClock
from tests.waiting import wait_equal, wait_until


def counter() -> tuple[list[int], ManualClock]:
    return [], ManualClock(start=0.0)


def test_it_returns_the_first_value_that_satisfies_the_condition() -> None:
    seen, clock = counter()

    def probe() -> int:
        seen.append(len(seen))
        return seen[-1]

    got = wait_until(probe, lambda n: n >= 3, now=clock.monotonic, pause=clock.advance)
    assert got == 3 and seen == [0, 1, 2, 3]
    assert clock.monotonic() == pytest.approx(3 * 0.05)  # paused between looks, not after the last


def test_a_value_already_there_is_returned_without_pausing() -> None:
    clock = ManualClock(start=0.0)
    assert wait_until(lambda: [["row"]], now=clock.monotonic, pause=clock.advance) == [["row"]]
    assert clock.monotonic() == 0.0


def test_at_the_deadline_it_names_what_it_waited_for_and_the_last_value() -> None:
    seen, clock = counter()

    def probe() -> int:
        seen.append(len(seen))
        return seen[-1]

    with pytest.raises(AssertionError) as info:
        wait_until(probe, lambda n: n < 0, what="a negative count", timeout=1, every=0.25,
                   now=clock.monotonic, pause=clock.advance)  # fmt: skip
    # looked at 0, 0.25, 0.5, 0.75 and 1.0 s: the last look is at the deadline, then it gives up
    assert seen == [0, 1, 2, 3, 4]
    assert str(info.value) == "waited 1 s for a negative count; last saw 4"


def test_wait_equal_shows_the_expected_and_the_last_value() -> None:
    clock = ManualClock(start=0.0)

    def spans() -> int:
        return 2

    with pytest.raises(AssertionError, match=r"waited 2 s for spans to be 3; last saw 2"):
        wait_equal(spans, 3, timeout=2, now=clock.monotonic, pause=clock.advance)
    assert wait_equal(spans, 2, now=clock.monotonic, pause=clock.advance) == 2
