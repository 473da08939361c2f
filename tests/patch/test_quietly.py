"""The choke point: tooltap's own failures are caught, logged at debug, counted; never raised."""

from __future__ import annotations

import logging

import pytest

from tooltap import _quietly as q


def test_returns_the_value_or_the_default(caplog: pytest.LogCaptureFixture) -> None:
    counted: list[str] = []
    q.set_error_sink(counted.append)
    try:
        assert q.quietly(lambda a, b=0: a + b, 1, b=2) == 3

        def broken() -> int:
            raise ZeroDivisionError("bug")

        with caplog.at_level(logging.DEBUG, logger="tooltap"):
            assert q.quietly(broken, default=7) == 7
    finally:
        q.set_error_sink(None)
    assert counted == ["test_quietly"]  # component = the failing function's module
    (record,) = caplog.records
    assert record.levelno == logging.DEBUG and record.exc_info is not None


def test_a_failing_sink_is_swallowed_too() -> None:
    def bad_sink(component: str) -> None:
        raise RuntimeError("metrics down")

    q.set_error_sink(bad_sink)
    try:
        q.report(ValueError("x"), "here")
        assert q.quietly(int, "not a number") is None
    finally:
        q.set_error_sink(None)


def test_interrupts_are_not_swallowed() -> None:
    def interrupted() -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        q.quietly(interrupted)
