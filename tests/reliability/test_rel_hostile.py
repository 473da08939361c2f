"""Hostile input: the parsers are total, bounded by ``Limits``, and say what happened.

* Hypothesis fuzz (``FUZZ_EXAMPLES`` per target; ``TOOLTAP_LONG=1``: 20,000) of the SSE
  decoder and of every dialect: random bytes, and dialect-shaped events with any value
  swapped for junk. Nothing raises, not even inside a reducer (the stream parser's safety
  net is bypassed by calling the reducers directly), every problem is a known kind, and
  the result does not depend on where the body was cut.
* Oversized input, 64x the limits: a giant line, an endless event with no blank line,
  a huge argument string, deep JSON. tracemalloc's peak stays within a small multiple of
  the configured limits, and the matching problem is recorded.
* The same hostile bodies through the real transport tap: the app gets its bytes
  unchanged, and the inference span ends with the problem on it.
"""

from __future__ import annotations

import itertools
import tracemalloc
from collections.abc import Iterable

import httpx2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.reliability.hostile import cuts, deep_json, events, huge_arguments, repeat
from tests.reliability.support import (
    FUZZ_EXAMPLES,
    Canned,
    Recorder,
    ReplayServer,
    attrs,
    traced_memory,
)
from tests.reliability.wire import STREAMED
from tooltap import Parsed
from tooltap._core.dialects import DIALECTS
from tooltap._core.dialects import dialect as dialect_entry
from tooltap._core.model import PROBLEM_KINDS, ToolCall
from tooltap._core.sse import SSEParser
from tooltap.core import Limits, StreamParser

FUZZ = settings(max_examples=FUZZ_EXAMPLES)  # the profile's, at the documented fuzz size
SMALL = Limits(max_event_bytes=64 * 1024, max_argument_bytes=64 * 1024)
CHUNK = 16 * 1024
TOTAL = 64 * SMALL.max_event_bytes  # 4 MiB of hostile input per case
#: Peak memory allowed while parsing, whatever the input size: a few copies of each limit.
BOUND = 4 * (SMALL.max_event_bytes + SMALL.max_argument_bytes + CHUNK) + 256 * 1024


def _check(parsed: Parsed, dialect: str) -> None:
    assert parsed.dialect == dialect
    assert {p.kind for p in parsed.problems} <= set(PROBLEM_KINDS)
    for call in parsed.calls:
        assert isinstance(call, ToolCall) and isinstance(call.args, dict)


def _parse(dialect: str, chunks: Iterable[bytes], limits: Limits | None = None) -> Parsed:
    parser = StreamParser(dialect, limits=limits)
    for chunk in chunks:
        parser.feed(chunk)
    return parser.close()


# --- fuzz -------------------------------------------------------------------------------


@pytest.mark.long
@FUZZ
@given(data=st.binary(max_size=2048), points=st.lists(st.integers(0, 2048), max_size=8))
def test_sse_decoder_is_total_and_cut_independent(data: bytes, points: list[int]) -> None:
    whole = SSEParser(256)
    expected = whole.feed(data) + whole.close()
    parts = SSEParser(256)
    got = []
    edges = [0, *sorted(p for p in set(points) if p <= len(data)), len(data)]
    for a, b in itertools.pairwise(edges):
        got += parts.feed(data[a:b])
    got += parts.close()
    assert got == expected
    assert parts.dropped_events == whole.dropped_events


@pytest.mark.long
@pytest.mark.parametrize("dialect", DIALECTS)
@FUZZ
@given(data=st.data())
def test_dialect_parsing_is_total_and_cut_independent(dialect: str, data: st.DataObject) -> None:
    """Reducers are total by themselves (called directly, without the stream parser's
    safety net), and the stream parser's result does not depend on the chunk boundaries."""
    body = data.draw(events(dialect) | st.binary(max_size=512))
    reducer = dialect_entry(dialect).reducer(Limits())
    sse = SSEParser()
    for ev in sse.feed(body) + sse.close():
        calls = reducer.event(ev)
        assert all(isinstance(c, ToolCall) for c in calls)
    _check(reducer.finish(), dialect)
    whole = _parse(dialect, [body])
    _check(whole, dialect)
    assert _parse(dialect, data.draw(cuts(body))) == whole


# --- oversized input ----------------------------------------------------------------------


def _hostile(kind: str, dialect: str) -> Iterable[bytes]:
    if kind == "giant_line":
        return repeat(b"data: ", b"a" * CHUNK, TOTAL)
    if kind == "endless_event":
        line = b'data: {"choices":[],"type":"ping","candidates":[]}\n'
        return repeat(b"", line * (CHUNK // len(line)), TOTAL)
    if kind == "huge_arguments":
        return huge_arguments(dialect, TOTAL)
    return [deep_json(dialect, 30_000)]  # 60 KB: under the event limit, far over recursion


EXPECTED = {
    "giant_line": "oversized_event",
    "endless_event": "oversized_event",
    "huge_arguments": "oversized_arguments",
    "deep_json": "unexpected_shape",
}


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("kind", list(EXPECTED))
def test_oversized_input_stays_within_limits(kind: str, dialect: str) -> None:
    _parse(dialect, _hostile(kind, dialect), Limits(1024, 1024))  # lazy imports, compiled regexes
    with traced_memory():
        start = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        parsed = _parse(dialect, _hostile(kind, dialect), SMALL)
        peak = tracemalloc.get_traced_memory()[1] - start
    _check(parsed, dialect)
    kinds = {p.kind for p in parsed.problems}
    if kind == "deep_json":  # the deep event is a shape problem; the deep arguments, too
        assert kinds & {"unexpected_shape", "invalid_json", "truncated_json"}, kinds
    else:
        assert EXPECTED[kind] in kinds, kinds
    assert peak < BOUND, f"peak {peak} bytes for {TOTAL} bytes of input (bound {BOUND})"
    assert not parsed.calls


# --- through the real tap ------------------------------------------------------------------


def _path(dialect: str) -> str:
    return {
        "openai.chat": "/v1/chat/completions",
        "openai.responses": "/v1/responses",
        "anthropic.messages": "/v1/messages",
        "google.genai": "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
    }[dialect]


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("kind", list(EXPECTED))
def test_hostile_stream_through_the_tap(
    kind: str, dialect: str, replay: ReplayServer, recorder: Recorder
) -> None:
    chunks = list(_hostile(kind, dialect))
    replay.canned = Canned(200, [("content-type", "text/event-stream")], chunks)
    recorder.instrument(limits=SMALL)
    with httpx2.Client(timeout=10) as client:
        request = client.build_request("POST", replay.url + _path(dialect), json=STREAMED)
        response = client.send(request, stream=True)
        try:
            got = b"".join(response.iter_raw())
        finally:
            response.close()
    assert got == b"".join(chunks)
    (span,) = recorder.inference()
    problems = {e.attributes.get("tooltap.problem.kind") for e in span.events if e.attributes}
    assert problems & (
        {EXPECTED[kind]} | ({"invalid_json", "truncated_json"} if kind == "deep_json" else set())
    )
    assert attrs(span).get("tooltap.stream.closed_early") is None
