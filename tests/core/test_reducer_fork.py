"""A reducer's ``fork`` is what it learnt so far, independent of it from then on: a
parser of the rest of a stream's bytes that takes it on gives the ``Parsed`` the whole
stream gives, at every event boundary of every recorded stream, while the reducer it
was copied from goes on with the same bytes (nothing is shared that either changes)."""

from __future__ import annotations

import pytest

from tests.corpus import CASES, Case
from tooltap._core.stream import StreamParser

#: The dialects whose reducers fork (their SDKs decode an event at its blank line).
FORKING = ("openai.chat", "openai.responses", "anthropic.messages")
STREAMS = [c for c in CASES if c.stream and c.status == 200 and c.dialect in FORKING]


def _boundaries(body: bytes) -> list[int]:
    """Where each event of an LF-framed body ends (after its blank line)."""
    ends, at = [], body.find(b"\n\n")
    while at >= 0:
        ends.append(at + 2)
        at = body.find(b"\n\n", at + 2)
    return ends


def test_the_recorded_streams_hold_forking_dialects() -> None:
    assert {c.dialect for c in STREAMS} == set(FORKING)


@pytest.mark.parametrize("case", STREAMS, ids=lambda c: c.name)
def test_a_fork_goes_on_as_the_whole_stream(case: Case) -> None:
    body = case.body.replace(b"\r\n", b"\n")
    whole = StreamParser(case.dialect)
    calls = whole.feed(body)
    expected = whole.close()
    for end in _boundaries(body):
        live = StreamParser(case.dialect)
        before = live.feed(body[:end])
        fork = live._reducer.fork()  # type: ignore[attr-defined]
        after = StreamParser(case.dialect, reducer=fork)
        rest = live.feed(body[end:])  # the original goes on first: the fork must not see it
        assert before + after.feed(body[end:]) == calls
        assert before + rest == calls
        assert after.close() == expected
        assert live.close() == expected
