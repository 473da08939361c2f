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
import struct
import tracemalloc
import zlib
from collections.abc import Iterable

import httpx2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.reliability.hostile import (
    FRAMING,
    cuts,
    deep_json,
    events,
    huge_arguments,
    repeat,
)
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
from tooltap._core.eventstream import EventStreamDecoder
from tooltap._core.eventstream import events as eventstream_events
from tooltap._core.model import PROBLEM_KINDS, ToolCall
from tooltap._core.ndjson import NDJSONParser
from tooltap._core.sse import SSEEvent, SSEParser
from tooltap.core import Limits, StreamParser
from tooltap.simulator._eventstream import encode, event_message

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


#: The dialects whose streams are SSE (the SSE-shaped hostile inputs below are theirs).
SSE_FRAMED = [d for d in DIALECTS if d not in FRAMING]


def _decoded(dialect: str, body: bytes) -> list[SSEEvent]:
    """``body`` as the events its framing carries."""
    framing = FRAMING.get(dialect, "sse")
    if framing == "eventstream":
        return eventstream_events(EventStreamDecoder().feed(body))
    lines = NDJSONParser() if framing == "ndjson" else SSEParser()
    return lines.feed(body) + lines.close()


def _parse(dialect: str, chunks: Iterable[bytes], limits: Limits | None = None) -> Parsed:
    parser = StreamParser(dialect, limits=limits, framing=FRAMING.get(dialect, "sse"))  # type: ignore[arg-type]
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
    for ev in _decoded(dialect, body):
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


@pytest.mark.parametrize("dialect", SSE_FRAMED)
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
        "cohere.chat": "/v2/chat",
    }[dialect]


@pytest.mark.parametrize("dialect", SSE_FRAMED)
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


def _framed_hostile(kind: str, dialect: str) -> Iterable[bytes]:
    """The oversized inputs in an event-stream or NDJSON body."""
    if dialect == "ollama.chat":  # one endless line: no call can outgrow it
        return repeat(b'{"message":{"content":"', b"a" * CHUNK, TOTAL)
    if kind == "giant_message":  # the prelude of one TOTAL-byte message, then its bytes
        head = encode({":event-type": "contentBlockDelta"}, b"")
        total, headers = len(head) + TOTAL, len(head) - 16
        prelude = struct.pack("!II", total, headers)
        prelude += struct.pack("!I", zlib.crc32(prelude))
        return repeat(prelude + head[12:-4], b"x" * CHUNK, total)
    start = {"toolUse": {"toolUseId": "t1", "name": "lookup"}}
    head = event_message("contentBlockStart", {"contentBlockIndex": 0, "start": start})
    piece = {"contentBlockIndex": 0, "delta": {"toolUse": {"input": "a" * 8192}}}
    first = {"contentBlockIndex": 0, "delta": {"toolUse": {"input": '{"text":"'}}}
    return repeat(
        head + event_message("contentBlockDelta", first),
        event_message("contentBlockDelta", piece),
        TOTAL,
    )


@pytest.mark.parametrize(
    ("dialect", "kind", "expected"),
    [
        ("bedrock.converse", "giant_message", "oversized_event"),
        ("bedrock.converse", "huge_arguments", "oversized_arguments"),
        ("ollama.chat", "giant_line", "oversized_event"),
    ],
)
def test_oversized_framed_input_stays_within_limits(dialect: str, kind: str, expected: str) -> None:
    _parse(dialect, _framed_hostile(kind, dialect), Limits(1024, 1024))
    with traced_memory():
        start = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        parsed = _parse(dialect, _framed_hostile(kind, dialect), SMALL)
        peak = tracemalloc.get_traced_memory()[1] - start
    _check(parsed, dialect)
    assert expected in {p.kind for p in parsed.problems}
    assert peak < BOUND, f"peak {peak} bytes for {TOTAL} bytes of input (bound {BOUND})"
    assert not parsed.calls
