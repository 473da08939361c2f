"""AWS event-stream decoder: the same messages as botocore's own parser, whatever the split."""

from __future__ import annotations

import base64
import json
from typing import Any

from botocore.eventstream import ChecksumMismatch, EventStreamBuffer
from hypothesis import given
from hypothesis import strategies as st

from tests.conftest import examples
from tooltap._core.eventstream import (
    EventStreamDecoder,
    EventStreamMessage,
    events,
    looks_like_eventstream,
)
from tooltap.simulator._eventstream import chunk_message, encode, event_message

PROFILE = examples(80)

_NAMES = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), min_size=1, max_size=8)
_VALUES = st.one_of(
    st.tuples(st.just(0), st.just(True)),
    st.tuples(st.just(1), st.just(False)),
    st.tuples(st.just(2), st.integers(-128, 127)),
    st.tuples(st.just(3), st.integers(-(2**15), 2**15 - 1)),
    st.tuples(st.just(4), st.integers(-(2**31), 2**31 - 1)),
    st.tuples(st.just(5), st.integers(-(2**63), 2**63 - 1)),
    st.tuples(st.just(6), st.binary(max_size=40)),
    st.tuples(st.just(7), st.text(max_size=40)),
    st.tuples(st.just(8), st.integers(-(2**63), 2**63 - 1)),
    st.tuples(st.just(9), st.binary(min_size=16, max_size=16)),
)
_HEADERS = st.dictionaries(
    _NAMES.filter(lambda n: len(n.encode("utf-8")) < 256), _VALUES, max_size=5
)
_MESSAGES = st.lists(st.tuples(_HEADERS, st.binary(max_size=300)), min_size=1, max_size=6)


def split(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(data) + 1) for c in cuts})
    pieces, last = [], 0
    for p in [*points, len(data)]:
        pieces.append(data[last:p])
        last = p
    return pieces


def botocore_messages(data: bytes) -> list[tuple[dict[str, Any], bytes]]:
    buffer = EventStreamBuffer()
    buffer.add_data(data)
    return [(m.headers, m.payload) for m in buffer]


def decoded(pieces: list[bytes], **kwargs: Any) -> tuple[list[EventStreamMessage], Any]:
    decoder = EventStreamDecoder(**kwargs)
    out: list[EventStreamMessage] = []
    for piece in pieces:
        out += decoder.feed(piece)
    return out, decoder


@PROFILE
@given(_MESSAGES, st.lists(st.integers(min_value=0), max_size=12))
def test_any_split_decodes_what_botocore_decodes(
    messages: list[tuple[dict[str, Any], bytes]], cuts: list[int]
) -> None:
    wire = b"".join(encode(h, p) for h, p in messages)
    expected = botocore_messages(wire)
    assert len(expected) == len(messages)
    got, decoder = decoded(split(wire, cuts))
    assert [(m.headers, m.payload) for m in got] == expected
    assert decoder.problems == [] and decoder.close() == 0


@PROFILE
@given(_MESSAGES)
def test_one_byte_chunks(messages: list[tuple[dict[str, Any], bytes]]) -> None:
    wire = b"".join(encode(h, p) for h, p in messages)
    got, _ = decoded([wire[i : i + 1] for i in range(len(wire))])
    assert [(m.headers, m.payload) for m in got] == botocore_messages(wire)


@PROFILE
@given(_MESSAGES, st.data())
def test_a_corrupt_message_is_a_counted_problem_where_botocore_raises(
    messages: list[tuple[dict[str, Any], bytes]], data: st.DataObject
) -> None:
    frames = [encode(h, p) for h, p in messages]
    good = frames.copy()
    bad = data.draw(st.integers(0, len(frames) - 1))
    frame = bytearray(frames[bad])
    at = data.draw(st.integers(12, len(frame) - 1))  # past the prelude: only the message CRC
    frame[at] ^= 0x01
    frames[bad] = bytes(frame)
    wire = b"".join(frames)
    buffer = EventStreamBuffer()
    buffer.add_data(wire)
    try:
        list(buffer)
    except ChecksumMismatch:
        pass
    else:
        raise AssertionError("botocore took a corrupt message")
    got, decoder = decoded(split(wire, data.draw(st.lists(st.integers(min_value=0)))))
    expected = botocore_messages(b"".join(good[:bad] + good[bad + 1 :]))
    assert [(m.headers, m.payload) for m in got] == expected
    assert decoder.problems == ["message checksum mismatch: message skipped"]


def test_a_corrupt_prelude_loses_the_framing_once() -> None:
    first, second = encode({"a": "b"}, b"one"), encode({"a": "c"}, b"two")
    broken = bytearray(second)
    broken[2] ^= 0xFF
    got, decoder = decoded([first + bytes(broken) + first])
    assert [m.payload for m in got] == [b"one"]
    assert decoder.problems == ["prelude checksum mismatch: framing lost"]
    assert decoder.feed(first) == []


def test_an_oversized_message_is_skipped_without_being_held() -> None:
    small, big = encode({}, b"x"), encode({}, b"y" * 5000)
    decoder = EventStreamDecoder(max_message_bytes=1000)
    out: list[EventStreamMessage] = []
    for piece in split(small + big + small, list(range(0, 6000, 700))):
        out += decoder.feed(piece)
        assert decoder.pending <= 1000
    assert [m.payload for m in out] == [b"x", b"x"]
    assert len(decoder.problems) == 1 and "over the limit" in decoder.problems[0]


def test_a_cut_message_is_left_over_at_close() -> None:
    frame = encode({"k": "v"}, b"payload")
    decoder = EventStreamDecoder()
    assert decoder.feed(frame[:-3]) == []
    assert decoder.close() == len(frame) - 3


def test_events_name_events_exceptions_and_unwrap_chunks() -> None:
    inner = {"type": "message_stop"}
    frames = (
        event_message("messageStart", {"role": "assistant"})
        + encode(
            {":message-type": "exception", ":exception-type": "throttlingException"},
            b'{"message":"slow down"}',
        )
        + chunk_message(inner)
    )
    got, _ = decoded([frames])
    named = events(got)
    assert [e.event for e in named] == ["messageStart", "throttlingException", "chunk"]
    assert json.loads(named[0].data) == {"role": "assistant"}
    assert json.loads(named[2].data) == inner
    assert looks_like_eventstream(frames) and not looks_like_eventstream(b'{"a": 1}')
    bogus = event_message("chunk", {"bytes": base64.b64encode(b"x").decode() + "!"})
    assert events(decoded([bogus])[0])[0].data.startswith(b"{")
