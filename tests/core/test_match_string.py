"""``match_string``: the C speedup and its pure Python twin give the same answers (issue 6).

The reference is the definition, written another way: ``chunk`` is head + body + rest,
where the body is UTF-8 that ``json.loads`` (strict) takes between quotes, and the rest is
``tail`` once the spaces and tabs outside its strings and before its first newline are
taken out.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tooltap._core import _json  # scripts/setup builds it (gcc)
from tooltap._core import _speedups as speedups
from tooltap._core._json import _match_string

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


def reference(chunk: bytes, head: bytes, tail: bytes) -> bytes | None:
    if not chunk.startswith(head):
        return None
    for end in range(len(head), len(chunk)):
        if chunk[end] != ord('"') or unpadded(chunk[end:]) != tail:
            continue
        body = chunk[len(head) : end]
        try:
            value = json.loads('"' + body.decode("utf-8") + '"', strict=True)
        except ValueError:
            continue
        if isinstance(value, str):
            return body
    return None


def test_the_speedup_is_what_the_core_uses() -> None:
    """scripts/setup builds it; a silent build failure would fall back to Python here."""
    assert _json.match_string is speedups.match_string


@settings(max_examples=1500)
@given(
    st.lists(st.sampled_from(PIECES), max_size=12),
    st.sampled_from([b"", b"x", HEAD[:-1]]),
    st.sampled_from(PADDED),
    st.sampled_from([TAIL, STRING_TAIL]),
)
def test_c_and_python_agree_with_the_definition(
    pieces: list[bytes], junk: bytes, rest: bytes, tail: bytes
) -> None:
    body = b"".join(pieces)
    for chunk in (HEAD + body + rest, junk + body + rest, HEAD + body + rest[:-1], HEAD + body):
        expected = reference(chunk, HEAD, tail)
        assert speedups.match_string(chunk, HEAD, tail) == expected
        assert _match_string(chunk, HEAD, tail) == expected


def test_padding_is_accepted_where_json_allows_it() -> None:
    for rest, matches in [
        (b'"}}\n\n', True),
        (b'"} }\n\n', True),
        (b'"}\t }  \n\n', True),
        (b'"}}\n \n', False),  # not a blank line: the event goes on
        (b'"}}\n', False),
    ]:
        for match in (speedups.match_string, _match_string):
            assert (match(HEAD + b"ab" + rest, HEAD, TAIL) == b"ab") is matches
    for match in (speedups.match_string, _match_string):  # a tail's strings are exact
        assert match(HEAD + b'"} ,"k":"a b"}\n\n', HEAD, STRING_TAIL) == b""
        assert match(HEAD + b'"},"k":"ab"}\n\n', HEAD, STRING_TAIL) is None


@given(st.binary(max_size=40), st.binary(max_size=6), st.binary(max_size=6))
def test_any_bytes(chunk: bytes, head: bytes, tail: bytes) -> None:
    tail = b'"' + tail
    expected = reference(chunk, head, tail)
    assert speedups.match_string(chunk, head, tail) == expected
    assert _match_string(chunk, head, tail) == expected


@pytest.mark.parametrize("match", [speedups.match_string, _match_string], ids=["c", "python"])
def test_edges(match: object) -> None:
    assert match(HEAD + TAIL, HEAD, TAIL) == b""  # an empty fragment
    assert match(HEAD[:-1] + TAIL, HEAD, TAIL) is None  # head and tail overlap
    assert match(bytearray(HEAD + b"a" + TAIL), HEAD, TAIL) is None  # only bytes chunks
    assert match(HEAD + b"a\\" + TAIL, HEAD, TAIL) is None  # the tail's quote escaped
    with pytest.raises(TypeError):
        match(HEAD, "head", TAIL)  # type: ignore[operator]
    with pytest.raises(ValueError):
        match(HEAD, HEAD, b"}}")  # type: ignore[operator]
