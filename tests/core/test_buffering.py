"""The ``stream_buffered`` rule on the numbers a tap sees at a stream's end."""

from __future__ import annotations

from typing import Any

import pytest

from tooltap._core.buffering import stream_buffered

RULE = {"min_wait": 2.0, "min_events": 8}


@pytest.mark.parametrize(
    ("case", "numbers", "expected"),
    [
        # a proxy released a finished response: 10 s of nothing, then every event in one read
        (
            "proxy, one read",
            dict(wait=10.0, spread=0.3, events=40, first_bytes=9000, total_bytes=9400),
            True,
        ),
        # the same over a real network: the first read got part of the burst, the rest at once
        (
            "proxy, a few reads",
            dict(wait=10.0, spread=0.05, events=9, first_bytes=1400, total_bytes=9400),
            True,
        ),
        # a slow first token, then a normal stream: one event in the first read
        (
            "slow first token",
            dict(wait=8.0, spread=4.0, events=1, first_bytes=180, total_bytes=9400),
            False,
        ),
        # a short answer after a long think, in one read: too few events to tell
        (
            "short answer",
            dict(wait=8.0, spread=0.01, events=3, first_bytes=600, total_bytes=600),
            False,
        ),
        # a fast stream over loopback: many events per read, no wait
        (
            "fast loopback",
            dict(wait=0.01, spread=0.02, events=30, first_bytes=6000, total_bytes=7000),
            False,
        ),
        # bursts of events, but most of the body kept streaming for a long time afterwards
        (
            "bursty stream",
            dict(wait=3.0, spread=6.0, events=12, first_bytes=2000, total_bytes=20000),
            False,
        ),
    ],
)
def test_rule(case: str, numbers: dict[str, Any], expected: bool) -> None:
    assert stream_buffered(**numbers, **RULE) is expected, case


def test_a_slow_consumer_does_not_hide_a_burst() -> None:
    """The app took 5 s over the events (spread), but they all came in the first read."""
    numbers: dict[str, Any] = dict(
        wait=3.0, spread=5.0, events=20, first_bytes=5000, total_bytes=5000
    )
    assert stream_buffered(**numbers, **RULE)


def test_thresholds_apply_and_zero_turns_it_off() -> None:
    numbers: dict[str, Any] = dict(
        wait=3.0, spread=0.01, events=20, first_bytes=5000, total_bytes=5000
    )
    assert stream_buffered(**numbers, min_wait=2.0, min_events=8)
    assert not stream_buffered(**numbers, min_wait=4.0, min_events=8)
    assert not stream_buffered(**numbers, min_wait=2.0, min_events=21)
    assert not stream_buffered(**numbers, min_wait=0.0, min_events=0)
