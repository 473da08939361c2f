"""SSEParser against the WHATWG event-stream rules, chunk boundaries and memory caps."""

from __future__ import annotations

import tracemalloc

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.conftest import examples
from tooltap._core.sse import SSEEvent, SSEParser


def parse(*chunks: bytes, max_event_bytes: int = 1 << 20) -> list[SSEEvent]:
    parser = SSEParser(max_event_bytes)
    events: list[SSEEvent] = []
    for chunk in chunks:
        events += parser.feed(chunk)
    return events + parser.close()


def bytewise(body: bytes) -> list[SSEEvent]:
    return parse(*(body[i : i + 1] for i in range(len(body))))


def test_basic_event() -> None:
    assert parse(b"event: ping\ndata: {}\n\n") == [SSEEvent("ping", b"{}", None, True)]


@pytest.mark.parametrize("eol", [b"\n", b"\r", b"\r\n"])
def test_line_endings(eol: bytes) -> None:
    body = b"event: a" + eol + b"data: 1" + eol + eol + b"data: 2" + eol + eol
    expected = [SSEEvent("a", b"1"), SSEEvent("message", b"2")]
    assert parse(body) == expected
    assert bytewise(body) == expected


def test_mixed_line_endings_in_one_stream() -> None:
    body = b"data: a\r\n\r\ndata: b\n\ndata: c\r\rdata: d\r\n\n"
    assert [e.data for e in parse(body)] == [b"a", b"b", b"c", b"d"]


def test_crlf_split_between_chunks_is_one_line_end() -> None:
    # CR ends chunk 1, LF starts chunk 2: one line end, not a blank line
    assert parse(b"data: a\r", b"\ndata: b\r\n\r\n") == [SSEEvent("message", b"a\nb")]
    # ... and a CR, then CRLF, is two line ends: the event is dispatched
    assert parse(b"data: a\r", b"\r\ndata: b\n\n") == [
        SSEEvent("message", b"a"),
        SSEEvent("message", b"b"),
    ]


def test_empty_chunks_do_not_break_a_split_crlf() -> None:
    assert parse(b"data: a\r", b"", b"\ndata: b\n\n") == [SSEEvent("message", b"a\nb")]


def test_comments_are_ignored() -> None:
    body = b": OPENROUTER PROCESSING\n\n:\ndata: x\n: inside\n\n"
    assert parse(body) == [SSEEvent("message", b"x")]


def test_data_before_event_in_a_block() -> None:
    assert parse(b"data: x\nevent: late\n\n") == [SSEEvent("late", b"x")]


def test_multi_line_data_is_joined_with_newlines() -> None:
    assert parse(b'data: {\ndata:  "a": 1\ndata: }\n\n') == [SSEEvent("message", b'{\n "a": 1\n}')]


def test_no_event_lines_means_message() -> None:
    events = parse(b"data: 1\n\ndata: 2\n\n")
    assert [e.event for e in events] == ["message", "message"]


def test_event_type_resets_after_dispatch() -> None:
    events = parse(b"event: a\ndata: 1\n\ndata: 2\n\n")
    assert [e.event for e in events] == ["a", "message"]


def test_several_events_in_one_chunk_and_one_event_over_many() -> None:
    one_chunk = parse(b"data: 1\n\ndata: 2\n\ndata: 3\n\n")
    assert [e.data for e in one_chunk] == [b"1", b"2", b"3"]
    many = parse(b"da", b"ta: hel", b"lo wor", b"ld\n", b"\n")
    assert many == [SSEEvent("message", b"hello world")]


def test_feed_returns_events_as_soon_as_they_complete() -> None:
    parser = SSEParser()
    assert parser.feed(b"data: 1\n") == []
    assert parser.feed(b"\ndata: 2") == [SSEEvent("message", b"1")]
    assert parser.feed(b"\n\n") == [SSEEvent("message", b"2")]
    assert parser.close() == []


def test_utf8_character_split_across_chunks() -> None:
    body = 'data: {"city": "Zürich 東京 🌧"}\n\n'.encode()
    cut = body.index("東".encode()) + 1  # inside the three-byte character
    events = parse(body[:cut], body[cut:])
    assert events[0].data.decode() == '{"city": "Zürich 東京 🌧"}'
    assert bytewise(body) == events
    event_name = "event: café\ndata: x\n\n".encode()
    assert bytewise(event_name)[0].event == "café"


def test_data_without_space_and_only_one_space_stripped() -> None:
    assert parse(b"data:x\n\n") == [SSEEvent("message", b"x")]
    assert parse(b"data:  x\n\n") == [SSEEvent("message", b" x")]


def test_field_without_colon() -> None:
    # a bare "data" line appends an empty line to the data buffer
    assert parse(b"data\ndata: a\n\n") == [SSEEvent("message", b"\na")]
    assert parse(b"data\n\n") == [SSEEvent("message", b"")]
    # an unknown field with or without colon is ignored
    assert parse(b"retry: 10\nfoo\nbar: baz\ndata: x\n\n") == [SSEEvent("message", b"x")]


def test_id_is_kept_and_id_with_nul_is_ignored() -> None:
    events = parse(b"id: 7\ndata: a\n\nid: 8\x009\ndata: b\n\ndata: c\n\n")
    assert [e.id for e in events] == ["7", "7", "7"]  # the last event id persists
    assert parse(b"id\ndata: a\n\n")[0].id == ""


def test_empty_data_line_dispatches_empty_string() -> None:
    assert parse(b"data:\n\n") == [SSEEvent("message", b"")]
    assert parse(b"data: \n\n") == [SSEEvent("message", b"")]


def test_block_without_data_is_not_dispatched() -> None:
    assert parse(b"event: lonely\n\n\n\nid: 1\n\n") == []


def test_leading_bom_is_stripped() -> None:
    body = b"\xef\xbb\xbfdata: a\n\n"
    assert parse(body) == [SSEEvent("message", b"a")]
    assert bytewise(body) == [SSEEvent("message", b"a")]
    # only at the very start of the stream
    assert parse(b"data: a\n\n\xef\xbb\xbfdata: b\n\n") == [SSEEvent("message", b"a")]


def test_close_flushes_an_unterminated_event() -> None:
    assert parse(b"data: a\n") == [SSEEvent("message", b"a", None, False)]
    assert parse(b"event: e\ndata: a") == [SSEEvent("e", b"a", None, False)]
    assert parse(b"data: a\n\ndata: b") == [
        SSEEvent("message", b"a", None, True),
        SSEEvent("message", b"b", None, False),
    ]
    assert parse(b"") == [] and parse(b"event: x") == []


def test_oversized_event_is_dropped_and_counted() -> None:
    parser = SSEParser(max_event_bytes=100)
    big = b"data: " + b"x" * 200 + b"\n\n"
    events = parser.feed(b"data: small\n\n" + big + b"data: after\n\n")
    assert [e.data for e in events] == [b"small", b"after"]
    assert parser.dropped_events == 1


def test_oversized_event_dropped_when_it_grows_across_chunks() -> None:
    parser = SSEParser(max_event_bytes=100)
    events: list[SSEEvent] = []
    events += parser.feed(b"data: " + b"y" * 60)
    events += parser.feed(b"y" * 60)  # the unfinished line passes the cap
    events += parser.feed(b"z" * 60 + b"\ndata: more\n\ndata: ok\n\n")
    assert [e.data for e in events] == [b"ok"]
    assert parser.dropped_events == 1
    many_lines = SSEParser(max_event_bytes=100)
    out = many_lines.feed(b"data: 0123456789\n" * 20 + b"\ndata: next\n\n")
    assert [e.data for e in out] == [b"next"] and many_lines.dropped_events == 1


def test_oversized_field_line_in_one_chunk_is_dropped() -> None:
    parser = SSEParser(max_event_bytes=100)
    events = parser.feed(b"event: " + b"n" * 500 + b"\ndata: x\n\ndata: y\n\n")
    assert [e.data for e in events] == [b"y"]
    assert parser.dropped_events == 1


def test_oversized_event_at_eof_is_counted() -> None:
    parser = SSEParser(max_event_bytes=10)
    assert parser.feed(b"data: " + b"q" * 50) == []
    assert parser.close() == []
    assert parser.dropped_events == 1


def test_endless_event_keeps_memory_bounded() -> None:
    cap = 256 * 1024
    parser = SSEParser(max_event_bytes=cap)
    line = b"data: " + b"x" * 1000 + b"\n"
    chunk = line * 64  # ~64 KB per chunk, never a blank line
    tracemalloc.start()
    try:
        for _ in range(400):  # ~26 MB in total
            assert parser.feed(chunk) == []
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 4 * cap + 2 * len(chunk)
    assert parser.feed(b"\ndata: alive\n\n") == [SSEEvent("message", b"alive")]
    assert parser.dropped_events == 1


def test_endless_line_keeps_memory_bounded() -> None:
    cap = 64 * 1024
    parser = SSEParser(max_event_bytes=cap)
    tracemalloc.start()
    try:
        parser.feed(b"data: ")
        for _ in range(300):
            parser.feed(b"z" * 32 * 1024)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 4 * cap + 64 * 1024
    assert parser.feed(b"\n\ndata: 1\n\n") == [SSEEvent("message", b"1")]


_line = st.sampled_from(
    [
        b"data: a",
        b"data:",
        b"data",
        b"event: e",
        b": c",
        b"id: 1",
        b"retry: 5",
        b"",
        b"data: \xc3\xa9",
    ]
)


@examples(200)
@given(
    lines=st.lists(_line, max_size=12),
    eol=st.sampled_from([b"\n", b"\r", b"\r\n"]),
    cuts=st.lists(st.integers(min_value=0, max_value=200), max_size=8),
)
def test_any_cut_points_give_the_same_events(
    lines: list[bytes], eol: bytes, cuts: list[int]
) -> None:
    body = eol.join(lines) + eol
    points = sorted({c for c in cuts if c <= len(body)})
    chunks = [body[a:b] for a, b in zip([0, *points], [*points, len(body)], strict=True)]
    assert parse(*chunks) == parse(body) == bytewise(body)
