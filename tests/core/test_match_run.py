"""``match_run``: the C speedup and its pure Python twin give the same answers.

The reference is the definition, written another way: events end at blank lines; from
``pos``, each event of at most ``cap`` bytes that is head + body + rest, where the body is
UTF-8 that ``json.loads`` (strict) takes between quotes and the rest is ``tail`` once the
spaces and tabs outside its strings and before its first newline are taken out, gives
its body, until the first event that is not. A slot byte of head or tail takes the
longest integer of at most 9 digits (just ``0`` when it starts with one) / the longest
run of printable ASCII other than quote and backslash.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tooltap._core import _json  # scripts/setup builds it (gcc)
from tooltap._core import _speedups as speedups
from tooltap._core._json import _match_run

HEAD = b'event: content_block_delta\ndata: {"index":0,"partial_json":"'
TAIL = b'"}}\n\n'
#: Pieces a body is drawn from: plain text, every escape (valid or cut short), quotes,
#: control bytes, UTF-8 (whole, cut, overlong, surrogate) and stray bytes.
PIECES = [
    b"ab", b" ", b"\\\\", b'\\"', b"\\/", b"\\b", b"\\f", b"\\n", b"\\r", b"\\t",
    b"\\u00e9", b"\\uD83D", b"\\u12", b"\\x", b"\\", b'"', b"\x00", b"\x1f", b"\x7f",
    "é".encode(), "東".encode(), "🌧".encode(), "東".encode()[:2], b"\xc0\xaf",
    b"\xed\xa0\x80", b"\xff", b"}}", b"\n",
]
#: Tails as providers pad them, and ones that must not match.
PADDED = [
    b'"}}\n\n', b'"} }\n\n', b'"}\t }  \n\n', b'" }}\n\n', b'"}}\n \n', b'"}} \n\n',
    b'"},"k":"a b"}\n\n', b'"} , "k" : "a b" }\n\n', b'"},"k":"ab"}\n\n', b'"}}\n',
]
STRING_TAIL = b'"},"k":"a b"}\n\n'
Run = tuple[bytes, int]



def unpadded(rest: bytes) -> bytes:
    out, in_string, newline = bytearray(), False, False
    for index, byte in enumerate(rest):
        if index and not in_string and not newline and byte in b" \t":
            continue
        if byte == ord('"') and index:
            in_string = not in_string
        elif byte == ord("\n"):
            newline = True
        out.append(byte)
    return bytes(out)


PRINTABLE = {byte for byte in range(0x20, 0x7F)} - {ord('"'), ord("\\")}


def filled(text: bytes, template: bytes) -> int | None:
    """How much of the start of ``text`` is ``template`` with its slots filled."""
    at = 0
    for byte in template:
        if byte == 1:
            digits = len(text[at:]) - len(text[at:].lstrip(b"0123456789"))
            if not digits:
                return None
            at += 1 if text[at] == ord("0") else min(digits, 9)
        elif byte == 2:
            while at < len(text) and text[at] in PRINTABLE:
                at += 1
        elif text[at : at + 1] != bytes((byte,)):
            return None
        else:
            at += 1
    return at


def reference(chunk: bytes, head: bytes, tail: bytes) -> bytes | None:
    start = filled(chunk, head)
    if start is None:
        return None
    for end in range(start, len(chunk)):
        if chunk[end] != ord('"'):
            continue
        rest = unpadded(chunk[end:])
        if filled(rest, tail) != len(rest):
            continue
        body = chunk[start:end]
        try:
            value = json.loads('"' + body.decode("utf-8") + '"', strict=True)
        except ValueError:
            continue
        if isinstance(value, str):
            return body
    return None


def reference_run(chunk: bytes, pos: int, head: bytes, tail: bytes, cap: int) -> tuple[bytes, int]:
    bodies = []
    while pos < len(chunk):
        stop = chunk.find(b"\n\n", pos) + 2
        body = reference(chunk[pos:stop], head, tail) if 2 <= stop <= pos + cap else None
        if body is None:
            break
        bodies.append(body)
        pos = stop
    return b"".join(bodies), pos


def both(chunk: bytes, pos: int, head: bytes, tail: bytes, cap: int = 1 << 20) -> Run:
    """What C and Python answer, after checking that they agree with the reference."""
    expected = reference_run(chunk, pos, head, tail, cap)
    assert speedups.match_run(chunk, pos, head, tail, cap) == expected
    assert _match_run(chunk, pos, head, tail, cap) == expected
    return expected


def test_the_speedup_is_what_the_core_uses() -> None:
    """scripts/setup builds it; a silent build failure would fall back to Python here."""
    assert _json.match_run is speedups.match_run


event = st.tuples(st.lists(st.sampled_from(PIECES), max_size=8), st.sampled_from(PADDED))


@settings(max_examples=1000)
@given(
    st.lists(st.tuples(event, st.sampled_from([b"", b"", b"", b"x", HEAD[:-1]])), max_size=5),
    st.sampled_from([TAIL, STRING_TAIL]),
    st.integers(0, 3),
    st.sampled_from([b"", b"event: ping\n", b"\n\n"]),
    st.sampled_from([1 << 20, 40, 80]),
)
def test_c_and_python_agree_with_the_definition(
    events: list[tuple[tuple[list[bytes], bytes], bytes]],
    tail: bytes,
    pos: int,
    rest: bytes,
    cap: int,
) -> None:
    chunk = b"".join(
        (junk or HEAD) + b"".join(pieces) + padded for (pieces, padded), junk in events
    )
    both(chunk + rest, 0, HEAD, tail, cap)
    both(chunk, pos, HEAD, tail, cap)


#: OpenAI's delta events: a sequence number in the head, a random string in the tail.
SLOT_HEAD = b'event: d\ndata: {"n":\x01,"id":"\x02","delta":"'
SLOT_TAILS = [b'","obfuscation":"\x02"}\n\n', b'","n":\x01}\n\n', b'"}\n\n']
INTS = [b"0", b"7", b"12", b"123456789", b"1234567890", b"01", b"", b"-1", b" 3"]
PLAINS = [b"", b"abc", b"a b", b'a"b', b"a\\b", "é".encode(), b"a\tb", b"~!#"]


@settings(max_examples=1000)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(INTS), st.sampled_from(PLAINS), st.lists(st.sampled_from(PIECES), max_size=4),
            st.sampled_from(INTS), st.sampled_from(PLAINS), st.sampled_from(SLOT_TAILS), st.booleans(),
        ),
        max_size=4,
    ),
    st.sampled_from(SLOT_TAILS),
)
def test_slots_stand_for_what_changes_from_event_to_event(
    events: list[tuple[bytes, bytes, list[bytes], bytes, bytes, bytes, bool]], tail: bytes
) -> None:
    chunk = b""
    for n, ident, pieces, m, obfuscation, shape, padded in events:
        rest = shape.replace(b"\x02", obfuscation).replace(b"\x01", m)
        if padded:
            rest = rest.replace(b"}", b" } ")
        head = SLOT_HEAD.replace(b"\x01", n).replace(b"\x02", ident)
        chunk += head + b"".join(pieces) + rest
    both(chunk, 0, SLOT_HEAD, tail)


def test_a_run_with_slots() -> None:
    events = b"".join(
        b'event: d\ndata: {"n":%d,"id":"fc_1","delta":"p%d","obfuscation":"x%dy"}\n\n' % (n, n, n)
        for n in range(30)
    )
    raw, end = both(events, 0, SLOT_HEAD, SLOT_TAILS[0])
    assert raw == b"".join(b"p%d" % n for n in range(30)) and end == len(events)
    assert both(events.replace(b"x29y", b"x\\y"), 0, SLOT_HEAD, SLOT_TAILS[0])[1] < end
    assert both(events, 0, SLOT_HEAD, SLOT_TAILS[2]) == (b"", 0)


@given(st.binary(max_size=60), st.integers(0, 8), st.binary(max_size=6), st.binary(max_size=6))
def test_any_bytes(chunk: bytes, pos: int, head: bytes, tail: bytes) -> None:
    both(chunk, pos, head, b'"' + tail)


def test_a_run_of_deltas_is_taken_in_one_step() -> None:
    deltas = b"".join(HEAD + f"p{n}".encode() + b'"} }\n\n' for n in range(40))
    other = b'event: content_block_stop\ndata: {"index":0}\n\n'
    raw, end = both(deltas + other + deltas, 0, HEAD, TAIL)
    assert raw == b"".join(f"p{n}".encode() for n in range(40)) and end == len(deltas)
    again = end + len(other)
    assert both(deltas + other + deltas, again, HEAD, TAIL)[1] == again + len(deltas)
    last = len(HEAD + b'p39"} }\n\n')
    assert both(deltas[:-1], 0, HEAD, TAIL)[1] == len(deltas) - last  # a partial last event
    short = len(HEAD + b'p0"} }\n\n')
    assert both(deltas, 0, HEAD, TAIL, cap=short)[1] == 10 * short  # p10 on: a byte over


def test_padding_is_accepted_where_json_allows_it() -> None:
    for rest, matches in [
        (b'"}}\n\n', True),
        (b'"} }\n\n', True),
        (b'"}\t }  \n\n', True),
        (b'"}}\n \n', False),  # not a blank line: the event goes on
        (b'"}}\n', False),
    ]:
        raw, end = both(HEAD + b"ab" + rest, 0, HEAD, TAIL)
        assert (raw == b"ab") is matches and bool(end) is matches
    assert both(HEAD + b'"} ,"k":"a b"}\n\n', 0, HEAD, STRING_TAIL)[1] > 0  # between tokens
    assert both(HEAD + b'"},"k":"ab"}\n\n', 0, HEAD, STRING_TAIL)[1] == 0  # strings exact


@pytest.mark.parametrize("match", [speedups.match_run, _match_run], ids=["c", "python"])
def test_edges(match: Any) -> None:
    assert match(HEAD + TAIL, 0, HEAD, TAIL, 100) == (b"", len(HEAD + TAIL))  # empty fragment
    assert match(HEAD[:-1] + TAIL, 0, HEAD, TAIL, 100) == (b"", 0)  # head and tail overlap
    assert match(bytearray(HEAD + b"a" + TAIL), 0, HEAD, TAIL, 100) == (b"", 0)  # bytes only
    assert match(HEAD + b"a\\" + TAIL, 0, HEAD, TAIL, 100) == (b"", 0)  # the quote escaped
    assert match(HEAD + TAIL, 99, HEAD, TAIL, 100) == (b"", 99)  # past the end
    with pytest.raises(TypeError):
        match(HEAD, 0, "head", TAIL, 100)
    with pytest.raises(ValueError):
        match(HEAD, 0, HEAD, b"}}", 100)


class _Plain:
    """An object without ``__slots__``: ``Hot`` looks its attributes up instead of reading
    them at a slot's offset, to the same effect."""


@pytest.mark.parametrize("slotted", [True, False], ids=["slots", "plain"])
def test_hot_applies_runs_and_hands_on_the_rest(slotted: bool) -> None:
    from tooltap._core.dialects._fragments import Fragments

    fragments: Any
    if slotted:
        fragments = Fragments()
        fragments.add_raw(b"ab", 100)
    else:
        fragments = _Plain()
        fragments.run, fragments.size = bytearray(b"ab"), 2
    sse, reducer = _Plain(), _Plain()
    sse.idle, reducer.armed = True, (HEAD, TAIL, fragments)
    handed: list[bytes] = []
    hot = speedups.Hot(sse, reducer, lambda chunk: handed.append(chunk) or [], 1000, 8)
    assert hot(HEAD + b"cd" + TAIL + HEAD + b"\\n" + TAIL) is None  # two events, one call
    assert (bytes(fragments.run), fragments.size) == (b"abcd\\n", 6)
    assert hot(HEAD + b"xyz" + TAIL) == []  # past the limit (8): feed decides exactly
    sse.idle = False
    assert hot(HEAD + b"e" + TAIL) == []  # inside an event: feed
    assert len(handed) == 2
    assert (bytes(fragments.run), fragments.size) == (b"abcd\\n", 6)
